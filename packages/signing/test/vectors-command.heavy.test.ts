/**
 * scripts/vectors.ts from the command line, in a process of its own: exit 1 and the failing ids on
 * a tampered copy of the vectors, exit 0 when all pass. The runner in process: vectors-runner.test.ts.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"
import { VECTORS_DIR } from "./vectors"

const temp: Array<string> = []
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true })
})

function tamperedCopy(edit: (files: { control: any; oauth: any; callback: any }) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "paykit-vectors-"))
  temp.push(dir)
  cpSync(VECTORS_DIR, dir, { recursive: true })
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8"))
  const files = { control: read("control.json"), oauth: read("oauth.json"), callback: read("callback.json") }
  edit(files)
  writeFileSync(join(dir, "control.json"), JSON.stringify(files.control))
  writeFileSync(join(dir, "oauth.json"), JSON.stringify(files.oauth))
  writeFileSync(join(dir, "callback.json"), JSON.stringify(files.callback))
  return dir
}

describe("vector runner command", { timeout: 2 * HANG_GUARD_MS + 30_000 }, () => {
  it("exits 1 and prints the failing ids from the command line, 0 when all pass", async () => {
    const dir = tamperedCopy(({ callback }) => {
      callback.cases[0].control = "f".repeat(40)
    })
    const script = fileURLToPath(new URL("../scripts/vectors.ts", import.meta.url))
    const run = (target: string) => runToExit(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", script, target], {
      cwd: fileURLToPath(new URL("..", import.meta.url))
    })
    const bad = await run(dir)
    expect(bad.code).toBe(1)
    expect(bad.stdout).toContain("FAIL callback.json callback-published-example")
    expect(bad.stdout).toMatch(/\d+ passed, 1 failed/)
    const good = await run(VECTORS_DIR)
    expect(good.code).toBe(0)
    expect(good.stdout).toMatch(/^\d+ passed, 0 failed$/m)
  })
})
