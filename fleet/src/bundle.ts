/**
 * The child processes' code, bundled once per run. A worker started through tsx compiles and loads
 * some 200 TypeScript modules of the workspace (`@paykit/source`): 1.5–2 s of CPU per start, and a
 * default run starts about 25 of them on a machine it shares. esbuild bundles the same sources (the
 * same condition, so the same code the tests run) into one file per child in well under a second,
 * and a child then starts in a few hundred ms. `effect` and `pg` stay outside the bundle and are
 * loaded from the fleet's own node_modules, as tsx would load them.
 *
 * The bundles go to a fresh directory under `node_modules/.cache/paykit-fleet/` (inside the fleet
 * package, so the external packages resolve), removed when the run ends.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { build } from "esbuild"

/** A child's entry under `src/` (the file the run forks). */
export type ChildEntry = "worker.ts" | "sim-process.ts"

export interface Bundles {
  /** The bundled file of `entry`. */
  readonly path: (entry: ChildEntry) => string
  /** Removes the directory. */
  readonly remove: () => void
}

/** Bundles the children's entries of `fleetDir/src` (ESM, Node 20). */
export async function bundleChildren(fleetDir: string, entries: ReadonlyArray<ChildEntry>): Promise<Bundles> {
  const root = join(fleetDir, "node_modules", ".cache", "paykit-fleet")
  mkdirSync(root, { recursive: true })
  const dir = mkdtempSync(join(root, "run-"))
  try {
    await build({
      entryPoints: Object.fromEntries(entries.map((e) => [e.replace(/\.ts$/, ""), join(fleetDir, "src", e)])),
      outdir: dir,
      outExtension: { ".js": ".mjs" },
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["@paykit/source"],
      external: ["effect", "pg", "pg-native", "esbuild"],
      // Bundled CommonJS code (a dependency of the workspace's sources) may call require().
      banner: { js: "import { createRequire as __fleetRequire } from 'node:module'; const require = __fleetRequire(import.meta.url);" },
      logLevel: "error"
    })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  return {
    path: (entry) => join(dir, entry.replace(/\.ts$/, ".mjs")),
    remove: () => rmSync(dir, { recursive: true, force: true })
  }
}
