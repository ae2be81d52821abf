import { operations } from "@paykit/contracts"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { coid, saleInput } from "../support/fixtures"
import { setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// Every operation of the spec against the in-process simulator, in realistic flows.
const { sim, pay } = setup()
afterAll(() => sim.close())
const called = new Set<string>()
const track = <T>(method: string, p: Promise<T>) => {
  called.add(method)
  return p
}

async function approvedSale(overrides: Record<string, string> = {}) {
  const input = saleInput(overrides)
  const ack = await track("sale", pay.sale(input))
  const orderid = ack["paynet-order-id"]!
  const final = await pay.awaitFinal({ client_orderid: input.client_orderid, orderid })
  return { input, orderid, final }
}

const payoutFields = () => ({ client_orderid: coid("po"), amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
const formFields = () => {
  const { credit_card_number: _a, cvv2: _b, card_printed_name: _c, expire_month: _d, expire_year: _e, cell_phone: _f, ssn: _g, birthday: _h, ...rest } = saleInput() as Record<string, string>
  return rest as ReturnType<typeof saleInput>
}

describe("every operation against the simulator", () => {
  it("sale → status → awaitFinal → return; declined and filtered are results", async () => {
    const { input, orderid, final } = await approvedSale()
    expect(final).toMatchObject({ _tag: "Final", status: "approved" })
    expect(await track("status", pay.status({ client_orderid: input.client_orderid, orderid }))).toMatchObject({ status: "approved", "paynet-order-id": orderid })
    expect(await track("return", pay.return({ client_orderid: input.client_orderid, orderid, amount: "4.00", currency: "USD" }))).toMatchObject({ type: "async-response" })
    expect((await approvedSale({ credit_card_number: "4000000000000002" })).final.status).toBe("declined")
    expect((await approvedSale({ credit_card_number: "4100000000000019" })).final.status).toBe("filtered")
    expect((await approvedSale({ credit_card_number: "4000000000000119" })).final.status).toBe("error")
  })

  it("preauth → capture; preauth → void", async () => {
    const a = saleInput()
    const ackA = await track("preauth", pay.preauth(a))
    await pay.awaitFinal({ client_orderid: a.client_orderid })
    expect(await track("capture", pay.capture({ client_orderid: a.client_orderid, orderid: ackA["paynet-order-id"]!, amount: "6.00", currency: "USD" }))).toMatchObject({ type: "async-response" })
    const b = saleInput()
    const ackB = await pay.preauth(b)
    await pay.awaitFinal({ client_orderid: b.client_orderid })
    expect(await track("void", pay.void({ client_orderid: b.client_orderid, orderid: ackB["paynet-order-id"]! }))).toMatchObject({ type: "async-response" })
    const order = sim.order(ackA["paynet-order-id"]!)
    expect(order?.transactions.map((t) => t.type)).toEqual(["preauth", "capture"])
  })

  it("card references: create-card-ref, get-card-info, make-rebill, create-card-ref v4, transfer-by-ref, pan-eligibility", async () => {
    const { input, orderid } = await approvedSale()
    const ref = await track("createCardRef", pay.createCardRef({ client_orderid: input.client_orderid, orderid }))
    if (ref.type === "reconciled") throw new Error("no fault injected, expected a direct reply")
    const cardrefid = ref["card-ref-id"]
    expect(await track("getCardInfo", pay.getCardInfo({ cardrefid }))).toMatchObject({ "masked-pan": "411111******1111", "last-four-digits": "1111" })
    expect(await track("makeRebill", pay.makeRebill({ client_orderid: coid("rb"), cardrefid, amount: "3.00", currency: "USD", order_desc: "rebill", ipaddress: "127.0.0.1" }))).toMatchObject({ type: "async-response" })
    expect(await track("createCardRefV4", pay.createCardRefV4({ client_orderid: input.client_orderid, orderid }))).toMatchObject({ type: "create-card-ref-response" })
    expect(await track("transferByRef", pay.transferByRef({ "client-order-id": coid("tbr"), amount: "2.00", currency: "USD", order_desc: "t", "source-card-ref-id": cardrefid, "destination-card-no": "5555555555554444" }))).toMatchObject({ type: "async-response" })
    expect(await track("panEligibilitySend", pay.panEligibilitySend({ "client-order-id": coid("pe"), "sending-card-ref-id": cardrefid }))).toMatchObject({ type: "async-response" })
  })

  it("hosted forms answer a redirect-url", async () => {
    for (const [method, call] of [
      ["saleForm", () => pay.saleForm(formFields())],
      ["preauthForm", () => pay.preauthForm(formFields())],
      ["paymentForm", () => pay.paymentForm(formFields())],
      ["payoutForm", () => pay.payoutForm({ client_orderid: coid("pf"), amount: "5.00", currency: "USD", redirect_url: "https://shop.example.com/r" })],
      ["accountVerificationForm", () => {
        const { amount: _a, currency: _c, ...f } = formFields() as Record<string, string>
        return pay.accountVerificationForm(f as never)
      }]
    ] as const) {
      const reply = await track(method, (call as () => Promise<{ type: string; "redirect-url"?: string }>)())
      expect(reply, method).toMatchObject({ type: "async-form-response" })
      expect(reply["redirect-url"]).toMatch(/^http/)
    }
  })

  it("account verification, payouts (HMAC and the two-step v4), transfer, recurring payment", async () => {
    const { amount: _a, currency: _c, redirect_url: _r, ...av } = saleInput() as Record<string, string>
    expect(await track("accountVerification", pay.accountVerification(av as never))).toMatchObject({ type: "async-response" })
    expect(await track("payout", pay.payout(payoutFields()))).toMatchObject({ type: "async-response" })
    const check = payoutFields()
    const checked = await track("payoutCheck", pay.payoutCheck(check))
    expect(await track("payoutPay", pay.payoutPay({ client_orderid: check.client_orderid, orderid: checked["paynet-order-id"]! }))).toMatchObject({ type: "async-response" })
    await expect(pay.payoutPay({ client_orderid: check.client_orderid, orderid: checked["paynet-order-id"]! })).rejects.toMatchObject({ _tag: "GatewayValidationError", errorCode: "payout-already-paid", category: "lifecycle" })
    expect(await track("transfer", pay.transfer({ client_orderid: coid("tr"), amount: "1.00", currency: "USD", order_desc: "t", ipaddress: "127.0.0.1", redirect_url: "https://shop.example.com/r", credit_card_number: "4111111111111111", cvv2: "123", expire_month: "12", expire_year: "2030", card_printed_name: "JOHN DOE", "destination-card-no": "5555555555554444" }))).toMatchObject({ type: "async-response" })
    const rp = await track("createRecurringPayment", pay.createRecurringPayment({ "client-orderid": coid("rp"), order_desc: "monthly", amount: "9.99", currency: "USD", "credit-card-number": "4111111111111111", "card-printed-name": "JOHN DOE", "expire-month": "12", "expire-year": "2030", cvv2: "123", country: "US", city: "Springfield", "zip-code": "12345", address1: "1 Main St", "customer-ip": "127.0.0.1", period: "month", interval: "1" }))
    expect(rp).toMatchObject({ type: "async-response" })
    const id = rp.type === "reconciled" ? "" : rp["recurring-payment-id"]
    expect(await track("processRecurringPayment", pay.processRecurringPayment({ "client-orderid": coid("rpc"), "recurring-payment-id": id }))).toMatchObject({ type: "process-recurring-payment-response" })
    expect(await track("updateRecurringPayment", pay.updateRecurringPayment({ "client-orderid": coid("rpu"), "recurring-payment-id": id, amount: "19.99" }))).toMatchObject({ type: "update-recurring-payment-response" })
  })

  it("3-D Secure: ActionRequired from awaitFinal, then method-url + CRes, or PaRes", async () => {
    const a = saleInput({ credit_card_number: "4000000000003220" })
    const ack = await pay.sale(a)
    const orderid = ack["paynet-order-id"]!
    const waiting = await pay.awaitFinal({ client_orderid: a.client_orderid })
    expect(waiting).toMatchObject({ _tag: "ActionRequired", status: "processing" })
    expect(waiting._tag === "ActionRequired" && waiting.redirectTo).toMatch(/^http/)
    await track("uploadMethodUrlResult", pay.uploadMethodUrlResult({ "client-order-id": a.client_orderid, orderid, threeDSCompInd: "Y" }))
    await track("uploadCresResult", pay.uploadCresResult({ "client-order-id": a.client_orderid, orderid, cRes: "Y" }))
    expect(await pay.awaitFinal({ client_orderid: a.client_orderid }, { stopOnRedirect: false })).toMatchObject({ _tag: "Final", status: "approved" })
    const b = saleInput({ credit_card_number: "4000000000003220" })
    const ackB = await pay.sale(b)
    await track("uploadParesResult", pay.uploadParesResult({ "client-order-id": b.client_orderid, orderid: ackB["paynet-order-id"]!, paRes: "N" }))
    expect(await pay.awaitFinal({ client_orderid: b.client_orderid }, { stopOnRedirect: false })).toMatchObject({ status: "declined" })
    await expect(pay.uploadParesResult({ "client-order-id": b.client_orderid, orderid: ackB["paynet-order-id"]!, paRes: "Y" })).rejects.toMatchObject({ errorCode: "threeds-state" })
  })

  it("covered every method of the operation table", () => {
    const all = Object.values(operations).map((o) => o.method).sort()
    expect([...called].sort()).toEqual(all)
  })
})
