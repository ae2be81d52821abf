import { defineConfig } from "vitest/config"
import { sharedConfig } from "../vitest.shared.ts"

// As in packages/client: with `import` among the conditions Vitest hands its Node workers, `pg`'s
// `require("pg-pool")` loads pg-pool's ES module build and fails ("Class extends value [object
// Module]"), so the conditions `import`, `module` and `require` are dropped here.
const conditions = (sharedConfig.ssr?.resolve?.conditions ?? []).filter((c) => c !== "import" && c !== "module" && c !== "require")

export default defineConfig({ ...sharedConfig, ssr: { ...sharedConfig.ssr, resolve: { ...sharedConfig.ssr?.resolve, conditions } } })
