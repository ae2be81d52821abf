/**
 * Regression tests of issue 12's "drift" items: each fixed on the side the interface supports and
 * recorded in the spec (the `x-paykit-decision` id is in each describe). Wallet and stored-card
 * payouts (D16, D16w), transfer-by-ref without a source (D15r), status by-request-sn (D7r), int64
 * endpoint ids (D16i) and unforeseen failures answered as ServerErrorResponse JSON (D8e). Strict
 * Accept (D8a) and unknown-currency (D2c) are in auth-validation.test.ts.
 */
import { Schema } from "effect"
import { ServerErrorResponse } from "@paykit/contracts"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { engineOf } from "../src/simulator/create"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

let sim: Simulator
let receiver: ReturnType<typeof callbackReceiver>
beforeEach(() => {
  receiver = callbackReceiver()
  sim = createSimulator({ callbackFetch: receiver.fetch, startTime: Date.UTC(2030, 0, 15, 12) })
})
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const login = testMerchant.login
const CALLBACK = "https://merchant.example/cb"
/** A payout body without the fixture's card, so a test names its own destination. */
const noCard = { credit_card_number: undefined, card_printed_name: undefined, expire_month: undefined, expire_year: undefined }

async function finishedSale(overrides: Record<string, string> = {}) {
  const fields = requests.sale(overrides)
  const reply = await signedRequest(sim, "SALE", fields)
  expect(reply.status).toBe(200)
  await sim.clock.advance(2000)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid, serial: String(reply.body["serial-number"]) }
}

async function cardRefOf(card: string): Promise<string> {
  const reply = await signedRequest(sim, "CARDREF", requests.createCardRef(await finishedSale({ credit_card_number: card })))
  expect(reply.status).toBe(200)
  return String(reply.body["card-ref-id"])
}

describe("wallet and stored-card payouts (docs/decisions.md#d16-one-payout-destination, docs/decisions.md#d16w-wallet-and-stored-card-payouts)", () => {
  it("a one-step payout to a wallet goes through the ledger and calls back", async () => {
    const fields = requests.payout({ ...noCard, wallet_id: "WALLET-0042", wallet_provider: "paykit-pay", server_callback_url: CALLBACK })
    const reply = await signedRequest(sim, "PAYOUT", fields)
    expect(reply.body).toMatchObject({ type: "async-response", status: "processing" })
    const orderid = String(reply.body["paynet-order-id"])
    expect(sim.order(orderid)).toMatchObject({ kind: "payout", inFlight: "25.00", paidOut: "0.00" })
    await sim.clock.advance(2000)
    expect(sim.order(orderid)).toMatchObject({ status: "approved", paidOut: "25.00", inFlight: "0.00" })
    expect(sim.order(orderid)?.card).toBeUndefined()
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]).toMatchObject({ type: "payout", status: "approved", orderid, amount: "25.00" })
  })

  it("payout-check then payout-pay to a wallet (without a provider)", async () => {
    const fields = requests.payoutCheck({ ...noCard, wallet_id: "W-1" })
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    expect(check.body.status).toBe("processing")
    const ids = { orderid: String(check.body["paynet-order-id"]), client_orderid: fields.client_orderid }
    expect((await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids))).status).toBe(200)
    await sim.clock.advance(2000)
    expect(sim.order(ids.orderid)?.transactions.map((t) => `${t.type}:${t.status}`)).toEqual(["payout-check:approved", "payout:approved"])
    expect(sim.order(ids.orderid)?.paidOut).toBe("25.00")
  })

  it("a magic amount declines a wallet payout; the money is released", async () => {
    const reply = await signedRequest(sim, "PAYOUT", requests.payout({ ...noCard, wallet_id: "W-2", amount: "40.51" }))
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))).toMatchObject({ status: "declined", paidOut: "0.00", inFlight: "0.00" })
  })

  it("the same wallet payout again is the same order; another wallet under that client_orderid is a conflict", async () => {
    const fields = requests.payout({ ...noCard, wallet_id: "W-3", wallet_provider: "a" })
    const first = await signedRequest(sim, "PAYOUT", fields)
    const again = await signedRequest(sim, "PAYOUT", fields)
    expect(again.body["paynet-order-id"]).toBe(first.body["paynet-order-id"])
    expectError(await signedRequest(sim, "PAYOUT", { ...fields, wallet_provider: "b" }), "client-orderid-conflict")
    expect(sim.orders().filter((o) => o.kind === "payout")).toHaveLength(1)
  })

  it("a stored card (destination-card-ref-id) decides like its card", async () => {
    const good = await signedRequest(sim, "PAYOUT", requests.payout({ ...noCard, "destination-card-ref-id": await cardRefOf("5555555555554444") }))
    const bad = await signedRequest(sim, "PAYOUT_V4_CHECK", requests.payoutCheck({ ...noCard, "destination-card-ref-id": await cardRefOf("4000000000000002") }))
    // The check validates the recipient at once: a declining card is declined, nothing to pay.
    expect(bad.body.status).toBe("declined")
    await sim.clock.advance(2000)
    expect(sim.order(String(good.body["paynet-order-id"]))).toMatchObject({ status: "approved", card: { last4: "4444" } })
    expectError(await signedRequest(sim, "PAYOUT", requests.payout({ ...noCard, "destination-card-ref-id": "CR-nope" })), "card-ref-not-found")
  })

  it("exactly one destination, else payout-destination naming what was given", async () => {
    const two = await signedRequest(sim, "PAYOUT", requests.payout({ wallet_id: "W-4" }))
    expectError(two, "payout-destination")
    expect(two.body["error-message"]).toContain("got 2: credit_card_number and wallet_id")
    const none = await signedRequest(sim, "PAYOUT_V4_CHECK", requests.payoutCheck({ ...noCard }))
    expectError(none, "payout-destination")
    expect(none.body["error-message"]).toContain("none was given")
    const provider = await signedRequest(sim, "PAYOUT", requests.payout({ wallet_provider: "paykit-pay" }))
    expectError(provider, "invalid-field")
    expect(provider.body["error-message"]).toBe("wallet_provider: only with wallet_id")
    expectError(await signedRequest(sim, "PAYOUT", requests.payout({ ...noCard, wallet_id: "" })), "invalid-field")
    expect(sim.orders()).toHaveLength(0)
  })
})

describe("transfer-by-ref: source-card-ref-id is optional (docs/decisions.md#d15r-transfer-by-reference-without-a-source)", () => {
  it("without a source the merchant's account pays and the destination card decides", async () => {
    const ok = await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef())
    expect(ok.body).toMatchObject({ type: "async-response", status: "processing" })
    const declining = await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "destination-card-no": "4000000000000002" }))
    const toRef = await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "destination-card-no": undefined, "destination-card-ref-id": await cardRefOf("5555555555554444") }))
    await sim.clock.advance(2000)
    expect(sim.order(String(ok.body["paynet-order-id"]))).toMatchObject({ kind: "transfer", status: "approved" })
    expect(sim.order(String(declining.body["paynet-order-id"]))?.status).toBe("declined")
    expect(sim.order(String(toRef.body["paynet-order-id"]))?.status).toBe("approved")
  })

  it("with a source the source card decides; still exactly one destination", async () => {
    const source = await cardRefOf("4000000000000002")
    const reply = await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "source-card-ref-id": source }))
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))?.status).toBe("declined")
    expectError(await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "destination-card-no": undefined })), "invalid-field")
  })
})

describe("status by-request-sn (docs/decisions.md#d7r-status-by-request-serial-number)", () => {
  it("answers the transaction whose request carried that serial-number", async () => {
    const sale = await finishedSale({ server_callback_url: CALLBACK })
    expect(sim.order(sale.orderid)?.transactions[0]?.serialNumber).toBe(sale.serial)
    const ids = { orderid: sale.orderid, client_orderid: sale.client_orderid }
    const first = await signedRequest(sim, "RETURN", requests.return({ ...ids, amount: "2.00", currency: "USD" }))
    await sim.clock.advance(2000)
    const second = await signedRequest(sim, "RETURN", requests.return({ ...ids, amount: "3.00", currency: "USD" }))
    const sn = (reply: { body: Record<string, any> }) => String(reply.body["serial-number"])
    const byRequest = async (serial: string) => {
      const reply = await signedRequest(sim, "STATUS", { login, ...ids, "by-request-sn": serial })
      expect(reply.status).toBe(200)
      return reply.body
    }
    // The second return is still processing; the order's status says so too, its first return does not.
    expect(await byRequest(sn(second))).toMatchObject({ status: "processing", "transaction-type": "return", amount: "3.00" })
    expect(await byRequest(sn(first))).toMatchObject({ status: "approved", "transaction-type": "return", amount: "2.00" })
    await sim.clock.advance(2000)
    const a = await byRequest(sn(first))
    const b = await byRequest(sn(second))
    expect(b).toMatchObject({ status: "approved", "transaction-type": "return", amount: "3.00", "returned-amount": "5.00" })
    expect(a["approval-code"]).not.toBe(b["approval-code"])
    expect(await byRequest(sale.serial)).toMatchObject({ status: "approved", "transaction-type": "sale", amount: "10.00" })
    // Without by-request-sn: the order as before (its last transaction).
    expect(await statusOf(sim, sale.orderid, sale.client_orderid)).toMatchObject({ "transaction-type": "return", amount: "10.00" })
  })

  it("a serial-number that is not one of the order's transactions → transaction-not-found", async () => {
    const sale = await finishedSale()
    const other = await finishedSale()
    const ids = { orderid: sale.orderid, client_orderid: sale.client_orderid }
    const reply = await signedRequest(sim, "STATUS", { login, ...ids, "by-request-sn": other.serial })
    expectError(reply, "transaction-not-found")
    expect(reply.body["error-message"]).toContain(`by-request-sn: order ${sale.orderid} has no transaction`)
    // A status reply's own serial-number made no transaction.
    const status = await signedRequest(sim, "STATUS", { login, ...ids })
    expectError(await signedRequest(sim, "STATUS", { login, ...ids, "by-request-sn": String(status.body["serial-number"]) }), "transaction-not-found")
  })

  it("the payout-check and payout-pay replies carry their transactions' serial-numbers", async () => {
    const fields = requests.payoutCheck()
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    const ids = { orderid: String(check.body["paynet-order-id"]), client_orderid: fields.client_orderid }
    const pay = await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids))
    expect(sim.order(ids.orderid)?.transactions.map((t) => t.serialNumber)).toEqual([check.body["serial-number"], pay.body["serial-number"]])
  })
})

describe("int64 endpoint ids as digit strings (docs/decisions.md#d16i-int64-endpoint-ids)", () => {
  // 2^53 + 1: Number() reads it as 2^53, so a Number()-keyed lookup would merge the two.
  const PAST_2_53 = "9007199254740993"
  const TWO_53 = "9007199254740992"
  const INT64_MAX = "9223372036854775807"

  function bigSim(): Simulator {
    return createSimulator({
      callbackFetch: receiver.fetch,
      merchants: [
        { login, controlKey: testMerchant.controlKey, endpointIds: [PAST_2_53, 1001n], endpointGroupIds: [INT64_MAX], rsaPublicKeyPem: testMerchant.publicKeyPem },
        { login: "other", controlKey: "OTHER-KEY", endpointIds: [TWO_53] }
      ]
    })
  }

  it("ids past 15 digits and 2^53 are served, digested and kept exactly", async () => {
    const big = bigSim()
    try {
      const fields = requests.sale()
      const reply = await signedRequest(big, "SALE", fields, { endpointId: PAST_2_53 })
      expect(reply.status).toBe(200)
      expect(reply.body["end-point-id"]).toBe(PAST_2_53)
      expect(big.order(String(reply.body["paynet-order-id"]))?.endpointId).toBe(PAST_2_53)
      // The neighbour Number() cannot tell apart belongs to another merchant: our key does not verify there.
      expectError(await signedRequest(big, "SALE", requests.sale(), { endpointId: TWO_53 }), "control-mismatch")
      expect((await signedRequest(big, "SALE", requests.sale(), { endpointId: TWO_53, controlKey: "OTHER-KEY" })).status).toBe(200)
      // The group id int64 max, in both path forms; C6 digests it as written.
      expect((await signedRequest(big, "SALE", requests.sale(), { endpointId: INT64_MAX })).status).toBe(200)
      expect((await signedRequest(big, "SALE", requests.sale(), { endpointId: INT64_MAX, group: true })).status).toBe(200)
      // OAuth operations and the login-named ones check the id against the merchant's set.
      expect((await signedRequest(big, "PAYOUT", requests.payout(), { endpointId: PAST_2_53 })).status).toBe(200)
      expect((await signedRequest(big, "STATUS", { login, client_orderid: fields.client_orderid }, { endpointId: INT64_MAX })).status).toBe(200)
      expectError(await signedRequest(big, "STATUS", { login, client_orderid: fields.client_orderid }, { endpointId: TWO_53 }), "unknown-endpoint")
      // A snapshot through JSON keeps the id as written.
      await big.close()
      const restored = createSimulator({ restore: JSON.parse(JSON.stringify(big.snapshot())), merchants: [{ login, controlKey: testMerchant.controlKey, endpointIds: [PAST_2_53] }, { login: "other", controlKey: "OTHER-KEY", endpointIds: [TWO_53] }] })
      expect(restored.order(String(reply.body["paynet-order-id"]))?.endpointId).toBe(PAST_2_53)
      await restored.close()
    } finally {
      await big.close()
    }
  })

  it("past int64, a leading zero or a sign → invalid-field naming endpointId", async () => {
    for (const id of ["9223372036854775808", "99999999999999999999", "01001", "+1001", "0"]) {
      const reply = await signedRequest(sim, "SALE", requests.sale(), { endpointId: id })
      expectError(reply, "invalid-field")
      expect(reply.body["error-message"]).toContain("endpointId: must be an integer from 1 to 2^63-1")
    }
  })

  it("a configured id that a number can no longer hold exactly is refused, not rounded", () => {
    expect(() => createSimulator({ merchants: [{ login: "x", controlKey: "k", endpointIds: [9007199254740993] }] })).toThrow(/merchant x: endpoint id: a number past 2\^53 loses digits/)
    expect(() => createSimulator({ merchants: [{ login: "x", controlKey: "k", endpointIds: ["12a"] }] })).toThrow(/must be an integer from 1 to 2\^63-1/)
  })
})

describe("an unforeseen failure is a ServerErrorResponse JSON (docs/decisions.md#d8e-unforeseen-failures)", () => {
  function breakClock(): void {
    // Something nothing foresaw throwing on the request path (here: the simulator's own clock).
    engineOf(sim)!.clock.runDue = () => {
      throw new TypeError("boom: secret-ish detail")
    }
  }

  async function expectServerError(response: Response): Promise<void> {
    expect(response.status).toBe(500)
    expect(response.headers.get("content-type")).toBe("application/vnd.pay+json")
    const body = Schema.decodeUnknownSync(ServerErrorResponse)(await response.json())
    expect(body).toMatchObject({ type: "error", "error-code": "internal-error" })
    expect(JSON.stringify(body)).not.toContain("boom")
  }

  it("in process", async () => {
    breakClock()
    const url = `http://sim.test/api/v2/sale/${testMerchant.endpointId}`
    await expectServerError(await sim.fetch(new Request(url, { method: "POST", headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }, body: "" })))
  })

  it("over HTTP (it was text/plain there)", async () => {
    const server = await sim.listen()
    try {
      breakClock()
      const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }
      await expectServerError(await fetch(`${server.url}/api/v2/status/${testMerchant.endpointId}`, { method: "POST", headers, body: "login=x" }))
      await expectServerError(await fetch(`${server.url}/__sim/orders/1`))
    } finally {
      await server.close()
    }
  })
})
