import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const readme = readFileSync(join(packageDir, "README.md"), "utf8")
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string)
const dir = mkdtempSync(join(tmpdir(), "paykit-readme-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("README examples", () => {
  it("has a block per scheme", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5)
  })

  it.each(blocks.map((code, i) => [i + 1, code] as const))("block %i runs", (i, code) => {
    const file = join(dir, `block-${i}.mts`)
    // Point the package import at the sources; run from the package so key paths resolve.
    writeFileSync(file, code.replaceAll('"@paykit/signing"', JSON.stringify(join(packageDir, "src/index.ts"))))
    const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", file], { cwd: packageDir, encoding: "utf8" })
    expect(run.stderr).toBe("")
    expect(run.stdout).not.toMatch(/BEGIN|MII/)
    expect(run.status).toBe(0)
  })
})
