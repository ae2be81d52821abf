/**
 * `pnpm generate` writes `src/generated/`; `--check` only compares and exits 1 on drift.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs"
import { join } from "node:path"
import { generateAll, generatedDir } from "./generator"

const check = process.argv.includes("--check")
const files = await generateAll()
const stale: Array<string> = []
mkdirSync(generatedDir, { recursive: true })
for (const [name, content] of Object.entries(files)) {
  const path = join(generatedDir, name)
  const current = existsSync(path) ? readFileSync(path, "utf8") : undefined
  if (current === content) continue
  stale.push(name)
  if (!check) writeFileSync(path, content)
}
if (check && stale.length > 0) {
  console.error(`src/generated is stale (${stale.join(", ")}): run pnpm generate`)
  process.exit(1)
}
console.log(check ? "src/generated is up to date" : `wrote ${stale.length} file(s) to src/generated`)
