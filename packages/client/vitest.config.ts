import { defineConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.ts"

// Vitest hands `ssr.resolve.conditions` to its Node workers as `--conditions` flags, and Node 20.19+
// applies them to `require()` too: with `import` among them, `pg`'s `require("pg-pool")` loads
// pg-pool's ES module build and fails ("Class extends value [object Module]"). Vite adds
// `import`/`require` by itself, so the client's tests drop them (and `module`) from the list.
const conditions = (sharedConfig.ssr?.resolve?.conditions ?? []).filter((c) => c !== "import" && c !== "module" && c !== "require")

export default defineConfig({
  ...sharedConfig,
  ssr: { ...sharedConfig.ssr, resolve: { ...sharedConfig.ssr?.resolve, conditions } },
  // what the client loads on first use is loaded before each file's tests (see the file)
  test: { ...sharedConfig.test, setupFiles: ["./test/support/warm-engine.ts"] }
})
