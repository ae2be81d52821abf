/**
 * The launcher both PayKit commands share inside the workspace (`paykit`: packages/cli/bin/paykit.js,
 * `paykit-sim`: packages/testkit/bin/paykit-sim.js). A published package ships no src/, and its bin
 * imports the built dist/cli.js itself; in the workspace a bin hands its package here, and the
 * program runs from src/cli.ts through tsx with the same arguments, so a stale or half-written dist/
 * (a build running beside the tests) never stands in for the sources. Without tsx (a workspace
 * installed without dev dependencies) the built dist/cli.js runs instead.
 */
import { spawn } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** tsx as this workspace installed it (not whatever the user's directory resolves), or undefined. */
function tsxEntry() {
  try {
    return import.meta.resolve("tsx")
  } catch {
    return undefined
  }
}

/**
 * Runs the program of the package at `packageUrl` (a `file:` URL of its directory, ending in `/`)
 * with this process's arguments: src/cli.ts through tsx as a child whose exit code and signals
 * are this process's, else dist/cli.js in this process. `name` is the command, for the one error.
 */
export async function runWorkspaceBin(packageUrl, name) {
  const source = fileURLToPath(new URL("src/cli.ts", packageUrl))
  const built = new URL("dist/cli.js", packageUrl)
  const tsx = tsxEntry()
  if (tsx !== undefined && existsSync(source)) {
    const child = spawn(process.execPath, ["--conditions=@paykit/source", "--import", tsx, source, ...process.argv.slice(2)], {
      stdio: "inherit",
      cwd: process.cwd()
    })
    const forward = (signal) => child.kill(signal)
    process.on("SIGINT", forward)
    process.on("SIGTERM", forward)
    child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)))
    return
  }
  if (existsSync(fileURLToPath(built))) {
    await import(built.href)
    return
  }
  console.error(`${name}: tsx is not installed and dist/cli.js is not built; run pnpm install or build the package first`)
  process.exit(1)
}
