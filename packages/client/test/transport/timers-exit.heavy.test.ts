/**
 * The shared attempt timer (src/transport/timers.ts) holds the process only while an attempt waits:
 * a script whose call ended exits at once, though its attempt had a 60 s timeout. A spawned
 * process, so a heavy test.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

describe("the shared attempt timer", () => {
  it("holds the process only while an attempt waits: a script whose call ended exits at once despite a 60 s timeout", () => {
    const transport = fileURLToPath(new URL("../../src/transport/fetch.ts", import.meta.url))
    const script = `
      const { makeTransports } = await import(${JSON.stringify(transport)})
      const { send } = makeTransports("http://gw.test", async () => new Response("{}", { status: 200 }))
      const started = Date.now()
      const result = await new Promise((resolve) => send({ operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 60000 }, resolve))
      console.log(JSON.stringify({ status: result.status, waitingTimers: process.getActiveResourcesInfo().filter((r) => r === "Timeout").length }))
    `
    const began = Date.now()
    // The hang guard is twice the attempt's timeout: a process held by that timer exits after it.
    const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 120_000 })
    const elapsed = Date.now() - began
    expect(run.stderr).toBe("")
    expect(JSON.parse(run.stdout.trim())).toEqual({ status: 200, waitingTimers: 0 })
    // Exited before the 60 s timeout could have fired: nothing held it (an ordering, not a speed).
    expect(elapsed).toBeLessThan(60_000)
  }, 180_000)
})
