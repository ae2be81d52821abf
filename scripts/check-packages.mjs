#!/usr/bin/env node
/**
 * check:packages — for every publishable package: pack it as it would be published, lint the
 * tarball with publint and @arethetypeswrong/cli (0 problems allowed), then install the tarballs
 * into a scratch project OUTSIDE the workspace and both require() and import() each package on
 * this Node. Assumes `pnpm build` has run (turbo makes check:packages depend on it).
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("..", import.meta.url).pathname
const packages = ["contracts", "signing", "client", "testkit"]
const bin = (name) => join(root, "node_modules", ".bin", name)
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

const scratch = mkdtempSync(join(tmpdir(), "paykit-packages-"))
const tarballs = {}
let problems = 0
try {
  for (const pkg of packages) {
    const dir = join(root, "packages", pkg)
    const { name } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    // pnpm pack rewrites workspace: ranges to real versions, as publishing does.
    const out = run(process.execPath, [process.env.npm_execpath ?? "pnpm", "pack", "--pack-destination", scratch], dir)
    const tgz = out.trim().split("\n").filter((l) => l.endsWith(".tgz")).at(-1)
    tarballs[name] = tgz.startsWith("/") ? tgz : join(scratch, tgz)
    for (const [tool, args] of [
      ["publint", [tarballs[name], "--strict"]],
      ["attw", [tarballs[name], "--format", "ascii", "--profile", "node16"]]
    ]) {
      try {
        const report = run(bin(tool), args, dir)
        console.log(`${name}: ${tool} ok${/warn|suggest/i.test(report) ? `\n${report}` : ""}`)
      } catch (e) {
        problems++
        console.error(`${name}: ${tool} found problems\n${e.stdout ?? ""}${e.stderr ?? ""}`)
      }
    }
  }
  // A consumer project outside the workspace: only the tarballs and the public registry.
  const app = join(scratch, "consumer")
  execFileSync("mkdir", ["-p", app])
  const deps = Object.fromEntries(Object.entries(tarballs).map(([n, t]) => [n, `file:${t}`]))
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, dependencies: deps, pnpm: { overrides: deps } }, null, 2))
  run(process.execPath, [process.env.npm_execpath ?? "pnpm", "install", "--ignore-workspace", "--no-frozen-lockfile", "--reporter=silent"], app)
  const names = Object.keys(tarballs)
  writeFileSync(join(app, "smoke.cjs"), names.map((n) => `{ const m = require(${JSON.stringify(n)}); if (Object.keys(m).length === 0) throw new Error("${n}: empty CJS exports"); console.log("require ${n}: " + Object.keys(m).length + " exports") }`).join("\n"))
  writeFileSync(join(app, "smoke.mjs"), names.map((n) => `{ const m = await import(${JSON.stringify(n)}); if (Object.keys(m).length === 0) throw new Error("${n}: empty ESM exports"); console.log("import ${n}: " + Object.keys(m).length + " exports") }`).join("\n"))
  for (const f of ["smoke.cjs", "smoke.mjs"]) {
    try {
      process.stdout.write(run(process.execPath, [f], app))
    } catch (e) {
      problems++
      console.error(`${f} failed\n${e.stdout ?? ""}${e.stderr ?? ""}`)
    }
  }
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
console.log(problems === 0 ? "check:packages: 0 problems" : `check:packages: ${problems} problem(s)`)
process.exit(problems === 0 ? 0 : 1)
