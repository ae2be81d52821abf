/**
 * The repository README's curl recipe (sale, then status) runs as written, in dash (POSIX sh, no
 * bash-only syntax) and in bash, against a simulator; its `paykit` lines parse.
 */
import { createSimulator, type Simulator } from "@paykit/testkit"
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8")
const section = readme.slice(readme.indexOf("## Talk to the gateway by hand"), readme.indexOf("## Demo"))
const [recipe, cli] = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!)

/** Runs a script without blocking this process (the simulator answering curl lives here). */
const runScript = (shell: string, script: string, env: Record<string, string>) => runToExit(shell, ["-e", "-c", script], { env: { ...process.env, ...env } })

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

describe("README: curl recipe", () => {
  let sim: Simulator
  let url: string
  let close: () => Promise<void>
  beforeAll(async () => {
    sim = createSimulator({ clock: "real" })
    const server = await sim.listen({ port: 0, host: "127.0.0.1" })
    url = server.url
    close = async () => {
      await server.close()
      await sim.close()
    }
  })
  afterAll(() => close())

  it("is there, with a sale and a status", () => {
    expect(recipe).toContain("/api/v2/sale/")
    expect(recipe).toContain("/api/v2/status/")
  })

  for (const shell of ["dash", "bash"]) {
    it.runIf(has(shell))(`runs in ${shell}: the sale is accepted, then status says approved`, async () => {
      const r = await runScript(shell, recipe!, { SIM: url })
      expect(r.stderr).toBe("")
      expect(r.code).toBe(0)
      const [saleLine, statusLine, httpLine] = r.stdout.trim().split("\n")
      expect(JSON.parse(saleLine!)).toMatchObject({ type: "async-response", status: "processing" })
      expect(JSON.parse(statusLine!)).toMatchObject({ type: "status-response", status: "approved" })
      expect(httpLine).toBe("HTTP 200")
    }, HANG_GUARD_MS + 30_000)
  }

  it("has no bash-only syntax dash would reject (dash -n parses it)", () => {
    const r = spawnSync("dash", ["-n", "-c", recipe!], { encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    expect(recipe).not.toMatch(/\[\[|\$\{[A-Za-z_]+:[0-9]|\$'|<<<|\bfunction\b|\blocal\b/)
  })

  it("shows paykit commands that exist", () => {
    for (const command of ["explain", "sign", "status", "verify-callback", "trigger"]) expect(cli).toContain(`npx -p @paykit/cli paykit ${command} `)
  })
})
