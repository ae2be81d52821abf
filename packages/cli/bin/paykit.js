#!/usr/bin/env node
// Launcher of the paykit command. A published package (no src/) runs the built
// dist/cli.js; inside the workspace it always runs src/cli.ts through tsx with the same args, so a
// stale or half-written dist/ (a build running beside the tests) can never stand in for the sources.
import { existsSync } from "node:fs"
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..")
const built = join(pkg, "dist", "cli.js")
const source = join(pkg, "src", "cli.ts")

async function runBuilt() {
  try {
    await import(pathToFileURL(built).href)
    return true
  } catch (error) {
    // Inside the workspace a built testkit may sit beside unbuilt dependencies: use the sources.
    if (error?.code === "ERR_MODULE_NOT_FOUND" && existsSync(source)) return false
    throw error
  }
}

const tsxAvailable = (() => {
  try {
    import.meta.resolve("tsx")
    return true
  } catch {
    return false
  }
})()

if (!(existsSync(source) && tsxAvailable) && existsSync(built) && (await runBuilt())) {
  // running from dist
} else if (existsSync(source)) {
  // Resolve tsx from this package (the workspace's), not from whatever directory the user is in.
  let tsx = "tsx"
  try {
    tsx = import.meta.resolve("tsx")
  } catch {
    // fall back to the bare name
  }
  const child = spawn(process.execPath, ["--conditions=@paykit/source", "--import", tsx, source, ...process.argv.slice(2)], {
    stdio: "inherit",
    cwd: process.cwd()
  })
  const forward = (signal) => child.kill(signal)
  process.on("SIGINT", forward)
  process.on("SIGTERM", forward)
  child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 0)))
} else {
  console.error("paykit: neither dist/cli.js nor src/cli.ts found; build @paykit/cli first")
  process.exit(1)
}
