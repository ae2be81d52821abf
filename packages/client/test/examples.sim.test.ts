import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { main as effectMain } from "../examples/effect-sale"
import { main as escapeHatchMain } from "../examples/escape-hatch"
import { main as hooksMain } from "../examples/hooks"
import { main as promiseMain } from "../examples/promise-sale"
import { BASE_URL, setup } from "./support/sim"
import { startTestTime, useTestTime } from "./support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// The README's examples are these files; running them here keeps the README from rotting.
describe("README examples run against the simulator", () => {
  const { sim } = setup()
  afterAll(() => sim.close())

  it("Promise facade: sale → awaitFinal → return", async () => {
    expect(await promiseMain({ baseUrl: BASE_URL, fetch: sim.fetch })).toMatchObject({ final: "approved", return: "async-response" })
  })

  it("Effect API: sale → awaitFinal → return", async () => {
    expect(await effectMain({ baseUrl: BASE_URL, fetch: sim.fetch })).toMatchObject({ final: "approved", return: "async-response" })
  })

  it("The escape hatch: a loyalty credit beyond the spec, then its balance", async () => {
    const result = await escapeHatchMain({ baseUrl: BASE_URL, fetch: sim.fetch })
    expect(result).toEqual({ orderid: expect.any(String), final: "approved", idempotencyKey: expect.any(String), attempts: 1, balance: "2.50", credits: "1" })
  })

  it("Request hooks: each attempt logged, the sale's serial number and attempts beside it", async () => {
    const lines: Array<string> = []
    const result = await hooksMain({ baseUrl: BASE_URL, fetch: sim.fetch, log: (line) => lines.push(line) })
    expect(result).toMatchObject({ type: "async-response", attempts: 1, serialNumber: expect.any(String) })
    expect(result.responses).toEqual([expect.objectContaining({ operation: "SALE", status: 200, attempt: 1, serialNumber: result.serialNumber })])
    expect(lines).toHaveLength(2)
    expect(lines.join("\n")).not.toContain("4111111111111111")
  })
})
