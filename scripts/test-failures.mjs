// What `pnpm test` prints last when turbo's typecheck, test or build failed: each failed task's
// errors, shortened, so the tail of a red CI log (often all a reader gets) names the failing test
// and its error instead of turbo's task list. turbo keeps each task's log in
// <package>/.turbo/turbo-<task>.log; this reads them after the run.
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { plain, root, workspaces } from "./turbo-logs.mjs"

const RULE = /^⎯{3,}/

/**
 * The blocks of a vitest log worth reading after a failure: each unhandled error and each failed
 * test's error, from its heading to the next rule, at most `max` lines each.
 */
function failureBlocks(text, max = 12) {
  const lines = plain(text).split("\n").map((l) => l.replace(/^@?[\w/.-]+:[\w-]+: /, ""))
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const heading = /⎯ Unhandled (Error|Rejection) /.test(line) || /^\s*FAIL\s/.test(line) && lines[i + 1] !== undefined && /Error|expected|Timed out/i.test(lines[i + 1])
    if (!heading) continue
    const block = [line.trim()]
    let j = i + 1
    for (; j < lines.length && !RULE.test(lines[j].trim()) && !/^\s*FAIL\s/.test(lines[j]); j++) {
      if (block.length < max && lines[j].trim() !== "" && !/^\s*❯ .*node_modules/.test(lines[j])) block.push(lines[j].trimEnd())
    }
    blocks.push(block.join("\n"))
    i = j - 1
  }
  return blocks
}

/** TypeScript's own error lines of a typecheck log. */
const typeErrors = (text) => plain(text).split("\n").filter((l) => /error TS\d+/.test(l)).slice(0, 10)

let printed = 0
for (const dir of workspaces) {
  for (const task of ["typecheck", "test", "build"]) {
    const log = join(root, dir, ".turbo", `turbo-${task}.log`)
    if (!existsSync(log)) continue
    const text = readFileSync(log, "utf8")
    const found = task === "test" ? failureBlocks(text) : typeErrors(text)
    const failedTask = /ELIFECYCLE|exited \(\d+\)|Command failed/.test(plain(text))
    if (found.length === 0 && !failedTask) continue
    console.log(`\n── ${dir} ${task}: ${found.length === 0 ? "failed (see its log above)" : ""}`)
    for (const block of found.slice(0, 6)) console.log(block)
    printed++
  }
}
if (printed === 0) console.log("test-failures: no failed task log found (turbo itself failed: see above)")
