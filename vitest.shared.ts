import { defineConfig } from "vitest/config"

/** Test files that spawn processes, start servers or browsers, take heap snapshots or fuzz at length. */
export const HEAVY_TESTS = "test/**/*.heavy.test.ts"

/**
 * Shared vitest settings (docs/testing.md). The `@paykit/source` condition makes workspace packages
 * resolve to their TypeScript sources, so tests never run against a stale `dist/`.
 *
 * Two projects per package: `unit` (everything else) runs first, then `heavy` (`*.heavy.test.ts`)
 * one file at a time, so a heap snapshot, a spawned process or a browser never competes with the
 * package's other files for the machine's two cores. Timeouts are hang guards, not speed limits: a
 * test that races time runs on a controlled clock, and these only end a test that hangs.
 */
export const sharedConfig = defineConfig({
  resolve: { conditions: ["@paykit/source", "module", "node", "import", "default"] },
  ssr: { resolve: { conditions: ["@paykit/source", "module", "node", "import", "default"] } },
  test: {
    environment: "node",
    reporters: ["default"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    passWithNoTests: true,
    projects: [
      {
        extends: true,
        // One module graph per worker for all its files: a file's tests clean up what they change
        // (fake timers, stubbed globals), and the package's modules load once, not once per file
        // (docs/testing.md has the measurement).
        test: { name: "unit", include: ["test/**/*.test.ts"], exclude: [HEAVY_TESTS, "**/node_modules/**"], isolate: false }
      },
      {
        extends: true,
        test: {
          name: "heavy",
          include: [HEAVY_TESTS],
          fileParallelism: false,
          testTimeout: 300_000,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
