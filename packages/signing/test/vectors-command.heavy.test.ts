/**
 * scripts/vectors.ts from the command line, in a process of its own: exit 1 and the failing ids on
 * a tampered copy of the vectors, exit 0 when all pass. The runner in process: vectors-runner.test.ts.
 */
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"
import { tamperedCopy } from "./tampered-vectors"
import { VECTORS_DIR } from "./vectors"

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
