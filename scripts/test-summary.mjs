// The last line of `pnpm test`: "N passed, M failed" summed over every vitest run of this test
// task. turbo writes each package's test log to <package>/.turbo/turbo-test.log and restores it on
// a cache hit, so a cached run (which prints nothing with --output-logs=new-only) still ends with
// what was checked. A package whose log is missing is counted as a failure: nothing unchecked can
// pass silently.
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { plain, root, workspaces } from "./turbo-logs.mjs"

let passed = 0
let failed = 0
let skipped = 0
const missing = []
for (const dir of workspaces) {
  const manifest = join(root, dir, "package.json")
  if (!existsSync(manifest)) continue
  const scripts = JSON.parse(readFileSync(manifest, "utf8")).scripts ?? {}
  if (scripts.test === undefined) continue
  const log = join(root, dir, ".turbo", "turbo-test.log")
  if (!existsSync(log)) {
    missing.push(dir)
    continue
  }
  const text = plain(readFileSync(log, "utf8"))
  for (const line of text.split("\n")) {
    const m = /^\s*(?:\S+:\s+)?Tests\s+(.*)$/.exec(line)
    if (m === null) continue
    for (const [, n, word] of m[1].matchAll(/(\d+) (passed|failed|skipped)/g)) {
      if (word === "passed") passed += Number(n)
      else if (word === "failed") failed += Number(n)
      else skipped += Number(n)
    }
  }
}
if (missing.length > 0) {
  console.log(`test-summary: no test log for ${missing.join(", ")} (counted as failed)`)
  failed += missing.length
}
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`)
process.exit(failed > 0 ? 1 : 0)
