import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

let sim: Simulator
let receiver: ReturnType<typeof callbackReceiver>
beforeEach(() => {
  receiver = callbackReceiver()
  sim = createSimulator({ callbackFetch: receiver.fetch, startTime: Date.UTC(2030, 0, 15, 12) })
})
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const login = testMerchant.login

async function finishedSale(overrides: Record<string, string> = {}) {
  const fields = requests.sale(overrides)
  const reply = await signedRequest(sim, "SALE", fields)
  await sim.clock.advance(2000)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
}

async function cardRef(ids: { orderid: string; client_orderid: string }): Promise<string> {
  const reply = await signedRequest(sim, "CARDREF", requests.createCardRef(ids))
  expect(reply.status).toBe(200)
  return String(reply.body["card-ref-id"])
}

describe("card references", () => {
  it("v2: from a finished payment; the same payment gives the same reference", async () => {
    const sale = await finishedSale({ credit_card_number: "5555555555554444" })
    const reply = await signedRequest(sim, "CARDREF", requests.createCardRef(sale))
    expect(reply.body).toMatchObject({ type: "create-card-ref-response", status: "approved", "paynet-order-id": sale.orderid })
    expect(await cardRef(sale)).toBe(reply.body["card-ref-id"])
    expect((await statusOf(sim, sale.orderid, sale.client_orderid))["card-ref-id"]).toBe(reply.body["card-ref-id"])
  })

  it("v4 (OAuth RSA-SHA256) with unq-card-ref-id", async () => {
    const sale = await finishedSale()
    const reply = await signedRequest(sim, "CARDREF_V4", requests.createCardRefV4(sale))
    expect(reply.body).toMatchObject({ type: "create-card-ref-response", "card-ref-id": expect.any(String), "unq-card-ref-id": expect.any(String) })
  })

  it("not from a payment still processing → card-ref-not-allowed; unknown order → order-not-found", async () => {
    const fields = requests.sale()
    const reply = await signedRequest(sim, "SALE", fields)
    expectError(await signedRequest(sim, "CARDREF", requests.createCardRef({ orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid })), "card-ref-not-allowed")
    expectError(await signedRequest(sim, "CARDREF", requests.createCardRef({ orderid: "1", client_orderid: "x" })), "order-not-found")
  })

  it("not from a payment without card data (a bank payout) → card-ref-not-allowed", async () => {
    const fields = requests.payout({ credit_card_number: undefined, card_printed_name: undefined, expire_month: undefined, expire_year: undefined, account_number: "DE89370400440532013000" })
    const reply = await signedRequest(sim, "PAYOUT", fields)
    await sim.clock.advance(2000)
    expectError(await signedRequest(sim, "CARDREF", requests.createCardRef({ orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid })), "card-ref-not-allowed")
  })

  it("get-card-info: BIN, brand, masked PAN, expiry", async () => {
    const ref = await cardRef(await finishedSale({ credit_card_number: "5555555555554444", expire_month: "07", expire_year: "2031" }))
    const info = await signedRequest(sim, "CARDINFO", requests.getCardInfo({ cardrefid: ref }))
    expect(info.body).toMatchObject({
      type: "get-card-info-response",
      "card-ref-id": ref,
      bin: "555555",
      "last-four-digits": "4444",
      "masked-pan": "555555******4444",
      "card-type": "MASTERCARD",
      "expire-month": "07",
      "expire-year": "2031",
      "card-printed-name": "TEST CUSTOMER"
    })
    expectError(await signedRequest(sim, "CARDINFO", requests.getCardInfo({ cardrefid: "CR-unknown" })), "card-ref-not-found")
  })
})

describe("rebill", () => {
  it("charges a card reference; each rebill is its own order with a callback", async () => {
    const ref = await cardRef(await finishedSale())
    const fields = requests.makeRebill({ cardrefid: ref, amount: "7.50", server_callback_url: "https://merchant.example/cb" })
    const reply = await signedRequest(sim, "REBILL", fields)
    expect(reply.body.status).toBe("processing")
    await sim.clock.advance(2000)
    const status = await statusOf(sim, String(reply.body["paynet-order-id"]), fields.client_orderid)
    expect(status).toMatchObject({ status: "approved", "transaction-type": "rebill", amount: "7.50", "card-ref-id": ref })
    expect(receiver.received.map((r) => r["type"])).toEqual(["rebill"])
    // Returns are allowed on an approved rebill.
    expect((await signedRequest(sim, "RETURN", { login, client_orderid: fields.client_orderid, orderid: String(reply.body["paynet-order-id"]) })).status).toBe(200)
  })

  it("a declining card's reference declines", async () => {
    const ref = await cardRef(await finishedSale({ credit_card_number: "4000000000000002" }))
    const fields = requests.makeRebill({ cardrefid: ref })
    const reply = await signedRequest(sim, "REBILL", fields)
    await sim.clock.advance(2000)
    expect((await statusOf(sim, String(reply.body["paynet-order-id"]), fields.client_orderid)).status).toBe("declined")
  })

  it("an unknown card reference → card-ref-not-found", async () => {
    expectError(await signedRequest(sim, "REBILL", requests.makeRebill({ cardrefid: "CR-nope" })), "card-ref-not-found")
  })
})

describe("payouts", () => {
  it("one-step payout to a card", async () => {
    const fields = requests.payout({ server_callback_url: "https://merchant.example/cb" })
    const reply = await signedRequest(sim, "PAYOUT", fields)
    expect(reply.body.status).toBe("processing")
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))).toMatchObject({ kind: "payout", status: "approved", amount: "25.00" })
    expect(receiver.received[0]).toMatchObject({ type: "payout", status: "approved" })
  })

  it("exactly one destination: none or several → payout-destination", async () => {
    const none = requests.payout({ credit_card_number: undefined })
    expectError(await signedRequest(sim, "PAYOUT", none), "payout-destination")
    const two = requests.payout({ destination_phone: "+4930123456" })
    expectError(await signedRequest(sim, "PAYOUT", two), "payout-destination")
  })

  it("payout-check then payout-pay; pay twice → payout-already-paid", async () => {
    const fields = requests.payoutCheck()
    const check = await signedRequest(sim, "PAYOUT_V4_CHECK", fields)
    // Registered, not final: no money moves until payout-pay.
    expect(check.body.status).toBe("processing")
    const orderid = String(check.body["paynet-order-id"])
    const ids = { orderid, client_orderid: fields.client_orderid }
    const pay = await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids))
    expect(pay.body.status).toBe("processing")
    await sim.clock.advance(2000)
    expect(sim.order(orderid)?.transactions.map((t) => `${t.type}:${t.status}`)).toEqual(["payout-check:approved", "payout:approved"])
    expectError(await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(ids)), "payout-already-paid")
  })

  it("payout-pay of an order not registered by payout-check → payout-not-checked", async () => {
    const sale = await finishedSale()
    expectError(await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay(sale)), "payout-not-checked")
    const direct = requests.payout()
    const reply = await signedRequest(sim, "PAYOUT", direct)
    expectError(await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay({ orderid: String(reply.body["paynet-order-id"]), client_orderid: direct.client_orderid })), "payout-not-checked")
    expectError(await signedRequest(sim, "PAYOUT_V4_PAY", requests.payoutPay({ orderid: "77", client_orderid: "none" })), "order-not-found")
  })

  it("magic amount 40.51 declines a bank payout", async () => {
    const fields = requests.payout({ credit_card_number: undefined, card_printed_name: undefined, expire_month: undefined, expire_year: undefined, account_number: "DE89370400440532013000", amount: "40.51" })
    const reply = await signedRequest(sim, "PAYOUT", fields)
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))?.status).toBe("declined")
  })
})

describe("transfers and PAN eligibility", () => {
  it("card-to-card transfer", async () => {
    const fields = requests.transfer()
    const reply = await signedRequest(sim, "TRANSFER_V4", fields)
    expect(reply.body.status).toBe("processing")
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))).toMatchObject({ kind: "transfer", status: "approved" })
  })

  it("transfer without a destination → invalid-field", async () => {
    expectError(await signedRequest(sim, "TRANSFER_V4", requests.transfer({ "destination-card-no": undefined })), "invalid-field")
  })

  it("transfer by reference", async () => {
    const ref = await cardRef(await finishedSale())
    const reply = await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "source-card-ref-id": ref }))
    expect(reply.status).toBe(200)
    await sim.clock.advance(2000)
    expect(sim.order(String(reply.body["paynet-order-id"]))?.status).toBe("approved")
    expectError(await signedRequest(sim, "TRANSFER_BY_REF_V4", requests.transferByRef({ "source-card-ref-id": "CR-nope" })), "card-ref-not-found")
  })

  it("pan-eligibility/send: eligible card approves, a declining card declines", async () => {
    const ok = await signedRequest(sim, "PAN_ELIGIBILITY_SEND", requests.panEligibilitySend())
    const no = await signedRequest(sim, "PAN_ELIGIBILITY_SEND", requests.panEligibilitySend({ "sending-card-number": "4000000000000002" }))
    await sim.clock.advance(2000)
    expect(sim.order(String(ok.body["paynet-order-id"]))?.status).toBe("approved")
    expect(sim.order(String(no.body["paynet-order-id"]))?.status).toBe("declined")
  })
})

describe("recurring payments", () => {
  it("a monthly schedule fires a rebill with a callback each time the clock passes a due date", async () => {
    const fields = requests.createRecurringPayment({ period: "month", interval: "1", server_callback_url: "https://merchant.example/cb" })
    const reply = await signedRequest(sim, "CREATE_RP_V4", fields)
    expect(reply.body).toMatchObject({ type: "async-response", "recurring-payment-id": expect.any(String) })
    const rp = String(reply.body["recurring-payment-id"])
    await sim.clock.advance(30 * 24 * 3600_000) // Feb 14: not yet due
    expect(sim.orders().filter((o) => o.kind === "rebill")).toHaveLength(0)
    await sim.clock.advance(2 * 24 * 3600_000) // Feb 16: first charge (Feb 15) done
    await sim.clock.advance(60 * 24 * 3600_000) // through Apr 16: two more
    const rebills = sim.orders().filter((o) => o.kind === "rebill")
    expect(rebills).toHaveLength(3)
    expect(rebills.every((o) => o.status === "approved" && o.recurringPaymentId === rp && o.amount === "9.99")).toBe(true)
    expect(rebills.map((o) => o.client_orderid)).toEqual([1, 2, 3].map((n) => `${fields["client-orderid"]}-${n}`))
    expect(receiver.received.filter((r) => r["type"] === "rebill")).toHaveLength(3)
  })

  it("daily with interval 2 and a finish date", async () => {
    const fields = requests.createRecurringPayment({ period: "day", interval: "2", "finish-date": "2030-01-21" })
    await signedRequest(sim, "CREATE_RP_V4", fields)
    await sim.clock.advance(30 * 24 * 3600_000)
    // Jan 17, 19, 21 → 3 charges, then the finish date stops it.
    expect(sim.orders().filter((o) => o.kind === "rebill")).toHaveLength(3)
  })

  it("period without interval → invalid-field", async () => {
    expectError(await signedRequest(sim, "CREATE_RP_V4", requests.createRecurringPayment({ interval: undefined })), "invalid-field")
  })
})
