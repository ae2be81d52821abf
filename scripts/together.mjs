#!/usr/bin/env node
/**
 * Runs shell commands at the same time and fails when any fails: `pnpm test` runs the packaging
 * checks, the API docs and the size budgets side by side once turbo is done, since each mostly uses
 * one core (docs/testing.md has the timings). Each command's output is printed in one block when
 * it ends, under its name, so the logs of two commands never interleave.
 *
 *   node scripts/together.mjs "pnpm check:packages --built" "pnpm run docs" "pnpm size"
 */
import { spawn } from "node:child_process"

const commands = process.argv.slice(2)
if (commands.length === 0) {
  console.error("usage: node scripts/together.mjs <command> [<command> ...]")
  process.exit(2)
}

const run = (command) =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] })
    const out = []
    child.stdout.on("data", (d) => out.push(d))
    child.stderr.on("data", (d) => out.push(d))
    child.on("close", (code, signal) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1)
      process.stdout.write(`\n── ${command} (${code === 0 ? "ok" : `failed: ${signal ?? `exit ${code}`}`}, ${seconds} s)\n`)
      process.stdout.write(Buffer.concat(out))
      resolve(code === 0)
    })
  })

const results = await Promise.all(commands.map(run))
process.exit(results.every(Boolean) ? 0 : 1)
