/**
 * paykit-sim --state FILE as a process (src/cli.ts through tsx: the current sources): it writes its
 * snapshot on SIGTERM and starts from it again. Readiness and shutdown by its output lines
 * (test/sim-process.ts).
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { requests, type Simulator, type SimulatorSnapshot } from "../src/index"
import { signedRequest } from "./helpers"
import { SOURCES, TEST_TIMEOUT_MS, killChildren, startSim } from "./sim-process"

const idOf = (reply: { body: Record<string, unknown> }) => String(reply.body["paynet-order-id"])

afterAll(killChildren)

describe("paykit-sim --state FILE", () => {
  it("writes its snapshot on SIGTERM and starts from it again", { timeout: TEST_TIMEOUT_MS }, async () => {
    const file = join(mkdtempSync(join(tmpdir(), "paykit-sim-state-")), "state.json")
    const one = await startSim(["--state", file], SOURCES)
    const fields = requests.sale()
    const sale = await signedRequest(undefined as unknown as Simulator, "SALE", fields, { fetch: (r) => fetch(r), base: one.url })
    expect(sale.status).toBe(200)
    expect(await one.stop()).toBe(0)
    expect(existsSync(file)).toBe(true)
    const written = JSON.parse(readFileSync(file, "utf8")) as SimulatorSnapshot
    expect(written.orders.map((o) => o.clientOrderId)).toEqual([fields.client_orderid])

    const two = await startSim(["--state", file], SOURCES)
    expect(two.lines.join("\n")).toContain(`Restored 1 orders from ${file}`)
    const again = await signedRequest(undefined as unknown as Simulator, "SALE", fields, { fetch: (r) => fetch(r), base: two.url })
    expect(idOf(again)).toBe(idOf(sale))
    const next = await signedRequest(undefined as unknown as Simulator, "SALE", requests.sale(), { fetch: (r) => fetch(r), base: two.url })
    expect(Number(idOf(next))).toBe(Number(idOf(sale)) + 1)
    expect(await two.stop()).toBe(0)
  })
})
