/**
 * The README's TypeScript example runs as written (with `@paykit/cli` pointed at the sources), in a
 * `node --import tsx` process of its own.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

describe("README", () => {
  // The child's start-up time is the machine's: the test timeout is only a hang guard.
  it("the TypeScript example prints a control and resolves to 0", async () => {
    const code = /```ts\n([\s\S]*?)```/.exec(readme)![1]!
    const dir = mkdtempSync(join(tmpdir(), "paykit-cli-readme-"))
    const file = join(dir, "example.mts")
    const pkg = new URL("..", import.meta.url).pathname
    writeFileSync(file, code.replaceAll('"@paykit/cli"', JSON.stringify(join(pkg, "src/index.ts"))) + "\nconsole.log(`exit ${code}`)\n")
    const r = await runToExit(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", file], { cwd: pkg })
    expect(r.stderr).toBe("")
    expect(r.stdout).toMatch(/^[0-9a-f]{40}\nexit 0\n$/)
  }, HANG_GUARD_MS + 30_000)
})
