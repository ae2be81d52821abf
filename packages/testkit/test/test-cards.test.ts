import { describe, expect, it } from "vitest"
import { magicAmounts, requests, testCards, type Simulator } from "../src/index"
import { expectError, signedRequest, statusOf, useCheckedSimulator } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
useCheckedSimulator((made) => (sim = made))

async function saleWith(overrides: Record<string, string>) {
  const fields = requests.sale(overrides)
  const reply = await signedRequest(sim, "SALE", fields)
  expect(reply.status).toBe(200)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid, reply }
}

describe("test cards", () => {
  it.each([
    ["4111111111111111", "approved", undefined],
    ["5555555555554444", "approved", undefined],
    ["4000000000000002", "declined", "05"],
    ["4000000000009995", "declined", "51"],
    ["4000000000000119", "error", "96"],
    ["4100000000000019", "filtered", "fraud"],
    ["4242424242424242", "approved", undefined]
  ])("%s → %s", async (pan, status, errorCode) => {
    const { orderid, client_orderid } = await saleWith({ credit_card_number: pan })
    await sim.clock.advance(2000)
    const reply = await statusOf(sim, orderid, client_orderid)
    expect(reply.status).toBe(status)
    if (errorCode === undefined) expect(reply["error-code"]).toBeUndefined()
    else expect(reply["error-code"]).toBe(errorCode)
  })

  it("4000000000009995 says insufficient funds", async () => {
    const { orderid, client_orderid } = await saleWith({ credit_card_number: "4000000000009995" })
    await sim.clock.advance(2000)
    expect((await statusOf(sim, orderid, client_orderid))["error-message"]).toBe("Insufficient funds")
  })

  it("4000000000000259 stays processing until 10 simulated minutes pass, then approves", async () => {
    const { orderid, client_orderid } = await saleWith({ credit_card_number: "4000000000000259" })
    await sim.clock.advance(10 * 60 * 1000 - 1)
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("processing")
    await sim.clock.advance(1)
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("approved")
  })

  it("4000000000003220 answers processing with a redirect-url to the ACS page", async () => {
    const { orderid, client_orderid, reply } = await saleWith({ credit_card_number: "4000000000003220" })
    expect(reply.body["redirect-url"]).toBe(`http://paykit-sim.local/__sim/acs/${orderid}`)
    await sim.clock.advance(60_000)
    const status = await statusOf(sim, orderid, client_orderid)
    expect(status).toMatchObject({ status: "processing", "redirect-to": reply.body["redirect-url"] })
  })

  it("a number failing Luhn is a 400 invalid-card-number", async () => {
    expectError(await signedRequest(sim, "SALE", requests.sale({ credit_card_number: "4000000000000001" })), "invalid-card-number")
  })

  it("the table lists every card", () => {
    expect(testCards.map((c) => c.number)).toHaveLength(9)
  })
})

describe("magic amounts", () => {
  it.each(magicAmounts.map((m) => [m.amount, m.outcome] as const))("amount %s → %s", async (amount, outcome) => {
    const { orderid, client_orderid } = await saleWith({ amount })
    await sim.clock.advance(2000)
    const status = (await statusOf(sim, orderid, client_orderid)).status
    expect(status).toBe(outcome === "error" ? "error" : "declined")
  })

  it("a declining card wins over a magic amount", async () => {
    const { orderid, client_orderid } = await saleWith({ amount: "50.01", credit_card_number: "4100000000000019" })
    await sim.clock.advance(2000)
    expect((await statusOf(sim, orderid, client_orderid)).status).toBe("filtered")
  })
})
