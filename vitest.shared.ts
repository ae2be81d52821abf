import { defineConfig } from "vitest/config"

/**
 * Shared vitest settings. The `@paykit/source` condition makes workspace packages resolve to their
 * TypeScript sources, so tests never run against a stale `dist/`.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@paykit/source", "module", "node", "import", "default"] },
  ssr: { resolve: { conditions: ["@paykit/source", "module", "node", "import", "default"] } },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
    testTimeout: 20_000,
    reporters: ["default"]
  }
})
