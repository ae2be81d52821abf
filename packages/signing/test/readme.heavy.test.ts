/**
 * The README's TypeScript blocks run as written (the package import pointed at the sources), each in
 * a process of its own.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"

const packageDir = fileURLToPath(new URL("..", import.meta.url))
const readme = readFileSync(join(packageDir, "README.md"), "utf8")
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string)
const dir = mkdtempSync(join(tmpdir(), "paykit-readme-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

// Each block runs in a `node --import tsx` process: its time is the machine's, so the test timeout
// is only a hang guard above the child's own.
describe("README examples", { timeout: HANG_GUARD_MS + 30_000 }, () => {
  it("has a block per scheme", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5)
  })

  it.each(blocks.map((code, i) => [i + 1, code] as const))("block %i runs", async (i, code) => {
    const file = join(dir, `block-${i}.mts`)
    // Point the package import at the sources; run from the package so key paths resolve.
    writeFileSync(file, code.replaceAll('"@paykit/signing"', JSON.stringify(join(packageDir, "src/index.ts"))))
    const run = await runToExit(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", file], { cwd: packageDir })
    expect(run.stderr).toBe("")
    expect(run.stdout).not.toMatch(/BEGIN|MII/)
    expect(run.code).toBe(0)
  })
})
