/**
 * Two facts a merchant reads from the simulator's replies (issue 29): an unknown path answers a
 * 404 of its own error code, and `status` of a voided order shows what the void reversed
 * (`voided-amount`), so a voided, partly captured preauth never reads as charged.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import * as Schema from "effect/Schema"
import { StatusResponse, ValidationErrorResponse } from "@paykit/contracts"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { signedRequest, statusOf } from "./helpers"

const DELAY = 2000
let sim: Simulator
beforeEach(() => {
  sim = createSimulator({ processingDelayMs: DELAY })
})
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const usd = (amount: string) => ({ amount, currency: "USD" })

async function approved(op: "SALE" | "PREAUTH", amount: string) {
  const fields = op === "SALE" ? requests.sale({ amount }) : requests.preauth({ amount })
  const reply = await signedRequest(sim, op, fields)
  expect(reply.status).toBe(200)
  await sim.clock.advance(DELAY)
  return { login: testMerchant.login, orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
}

describe("an unknown path", () => {
  it("answers 404 with error-code unknown-path, naming the path", async () => {
    for (const path of ["/api/v2/nothing/1001", "/api/v2/nothing/group/2001", "/paynet/api/v2/sale"]) {
      const response = await sim.fetch(new Request(`http://sim.test${path}`, { method: "POST", headers: { accept: "application/vnd.pay+json" }, body: "" }))
      expect(response.status).toBe(404)
      const body = Schema.decodeUnknownSync(ValidationErrorResponse)(await response.json())
      expect(body["error-code"]).toBe("unknown-path")
      expect(body["error-message"]).toContain(path)
    }
  })
})

describe("status after a void shows voided-amount", () => {
  it("a voided, partly captured preauth: captured 4.17, voided 4.17, the rest of the hold released", async () => {
    const ids = await approved("PREAUTH", "10.00")
    expect((await signedRequest(sim, "CAPTURE", { ...ids, ...usd("4.17") })).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect((await signedRequest(sim, "VOID", ids)).status).toBe(200)
    await sim.clock.advance(DELAY)
    const status = await statusOf(sim, ids.orderid, ids.client_orderid)
    expect(Schema.decodeUnknownSync(StatusResponse)(status)).toMatchObject({
      "transaction-type": "void",
      "captured-amount": "4.17",
      "voided-amount": "4.17",
      "hold-released-amount": "5.83"
    })
  })

  it("a voided sale shows its amount voided; an order never voided shows no voided-amount", async () => {
    const voided = await approved("SALE", "12.00")
    expect((await signedRequest(sim, "VOID", voided)).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await statusOf(sim, voided.orderid, voided.client_orderid)).toMatchObject({ "voided-amount": "12.00" })
    const kept = await approved("PREAUTH", "10.00")
    expect((await signedRequest(sim, "CAPTURE", { ...kept, ...usd("4.17") })).status).toBe(200)
    await sim.clock.advance(DELAY)
    expect(await statusOf(sim, kept.orderid, kept.client_orderid)).not.toHaveProperty("voided-amount")
  })
})
