import { describe, expect, it } from "vitest"
import { requests, type Simulator } from "../src/index"
import { signedRequest, useCheckedSimulator } from "./helpers"

let sim: Simulator
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
useCheckedSimulator((made) => (sim = made))

/** A reply's field names in the order its JSON writes them (clients may compare bodies byte for byte). */
async function namesOf(op: "SALE" | "STATUS", fields: Record<string, string>): Promise<{ names: string[]; body: Record<string, string> }> {
  const reply = await signedRequest(sim, op, fields)
  expect(reply.status).toBe(200)
  return { names: Object.keys(reply.body), body: reply.body }
}

describe("reply field order (the hot path builds replies without delete; issue #14)", () => {
  it("a sale's AsyncResponse and an approved sale's StatusResponse keep their field order", async () => {
    const fields = requests.sale({ email: "customer@example.com" })
    const sale = await namesOf("SALE", fields)
    expect(sale.names).toEqual(["type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "end-point-id"])
    const orderid = sale.body["paynet-order-id"]!
    const follow = { login: requests.status().login, client_orderid: fields.client_orderid, orderid }
    const processing = await namesOf("STATUS", follow)
    expect(processing.names).toEqual(["type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "transaction-type", "amount", "currency", "returned-amount", "bin", "last-four-digits", "card-type", "card-exp-month", "card-exp-year", "cardholder-name", "email"])
    await sim.clock.advance(2000)
    const approved = await namesOf("STATUS", follow)
    expect(approved.names).toEqual([...processing.names, "approval-code", "processor-rrn"])
    // Each reply draws its own serial-number; the sale's is its transaction's (status by-request-sn finds it).
    expect(new Set([sale.body["serial-number"], processing.body["serial-number"], approved.body["serial-number"]]).size).toBe(3)
    const byRequest = await signedRequest(sim, "STATUS", { ...follow, "by-request-sn": sale.body["serial-number"]! })
    expect(byRequest.body["transaction-type"]).toBe("sale")
  })
})
