import { callbackControl } from "@paykit/signing"
import { beforeEach, describe, expect, it } from "vitest"
import { createPayClient, memoryCallbackStore, type CallbackClaimStore, type ConfirmedCallback, type StatusReply } from "../../src/index"
import { merchant } from "../support/fixtures"
import { routedFetch, statusOk, stubFetch, type Script } from "../support/stub"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

function signed(values: Record<string, string>, key = merchant.controlKey): URLSearchParams {
  const p = new URLSearchParams(values)
  p.set("control", callbackControl({ status: values["status"]!, orderid: values["orderid"]!, client_orderid: values["client_orderid"]! }, key))
  return p
}

const base = { status: "approved", orderid: "123", merchant_order: "c-1", client_orderid: "c-1", type: "sale", amount: "10.00", currency: "USD" }
const get = (p: URLSearchParams) => new Request(`https://shop.example.com/cb?${p.toString()}`)
const saleStatus = (extra: Record<string, unknown> = {}) => statusOk("approved", { amount: "10.00", currency: "USD", "transaction-type": "sale", "returned-amount": "0.00", ...extra })

function clientWithStatus(status: Array<Script> | ((form: URLSearchParams, n: number) => Script)) {
  const stub = routedFetch({ status })
  return { pay: createPayClient({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch, retry: { maxRetries: 0 } }), stub }
}

describe("verifyCallback: signed fields apart from claims", () => {
  const pay = createPayClient({ baseUrl: "http://gw.test", ...merchant, fetch: stubFetch([]).fetch })

  it("accepts URLSearchParams, URL, GET and POST requests; only status, orderid and client_orderid are top level", async () => {
    const p = signed(base)
    const cb = await pay.verifyCallback(p)
    expect(cb).toMatchObject({ status: "approved", orderid: "123", client_orderid: "c-1", claims: { type: "sale", amount: "10.00", currency: "USD" } })
    expect("amount" in cb).toBe(false)
    expect(cb.raw).toBe(p.toString())
    expect(await pay.callbacks.verify(new URL(`https://x/cb?${p}`))).toMatchObject({ client_orderid: "c-1" })
    expect(await pay.verifyCallback(get(p))).toMatchObject({ claims: { amount: "10.00" } })
    const post = new Request("https://x/return", { method: "POST", body: p, headers: { "Content-Type": "application/x-www-form-urlencoded" } })
    expect(await pay.verifyCallback(post)).toMatchObject({ claims: { type: "sale" } })
    const upper = new URLSearchParams(p)
    upper.set("control", p.get("control")!.toUpperCase())
    expect(await pay.verifyCallback(upper)).toMatchObject({ status: "approved" })
  })

  it("accepts a real gateway's callback: no currency, unknown extra fields kept, type reversal or chargeback", async () => {
    const { currency: _c, ...noCurrency } = base
    const real = signed({ ...noCurrency, type: "reversal", amount: "5.00", descriptor: "SHOP", "approval-code": "A1", "processor-rrn": "000123", bin: "411111", "last-four-digits": "1111", "x-new-field": "kept" })
    const cb = await pay.verifyCallback(real)
    expect(cb.claims).toMatchObject({ type: "reversal", amount: "5.00", "x-new-field": "kept", "processor-rrn": "000123" })
    expect(cb.claims.currency).toBeUndefined()
    expect((await pay.verifyCallback(signed({ ...base, type: "chargeback" }))).claims.type).toBe("chargeback")
    // The final redirect posts only the signed fields: still verifiable.
    expect(await pay.verifyCallback(signed({ status: "approved", orderid: "123", client_orderid: "c-1" }))).toMatchObject({ claims: {} })
  })

  it("refuses a field sent twice, a merchant_order other than the signed client_orderid, forged or malformed controls", async () => {
    const declined = signed({ ...base, status: "declined" })
    for (const [name, value] of [["status", "approved"], ["client_orderid", "victim"], ["orderid", "999"], ["amount", "1.00"]] as const) {
      const polluted = new URLSearchParams(declined)
      polluted.append(name, value)
      await expect(pay.verifyCallback(polluted)).rejects.toMatchObject({ _tag: "CallbackSignatureError", reason: "invalid-fields", issue: `${name}: sent more than once` })
    }
    const swapped = new URLSearchParams(declined)
    swapped.set("merchant_order", "victim")
    await expect(pay.verifyCallback(swapped)).rejects.toMatchObject({ reason: "invalid-fields" })
    await expect(pay.verifyCallback(signed(base, "wrong-key"))).rejects.toMatchObject({ reason: "mismatch" })
    const tampered = signed(base)
    tampered.set("status", "declined")
    await expect(pay.verifyCallback(tampered)).rejects.toMatchObject({ reason: "mismatch" })
    await expect(pay.verifyCallback(new URLSearchParams(base))).rejects.toMatchObject({ reason: "missing" })
    await expect(pay.verifyCallback(new URLSearchParams({ ...base, control: "xyz" }))).rejects.toMatchObject({ reason: "malformed" })
    await expect(pay.verifyCallback(new URLSearchParams({ status: "approved" }))).rejects.toMatchObject({ reason: "invalid-fields" })
    await expect(pay.verifyCallback(signed({ ...base, amount: "ten" }))).rejects.toMatchObject({ reason: "invalid-fields", issue: expect.stringContaining("amount") })
  })
})

describe("callbackHandler", () => {
  it("hands off once per distinct callback, with the current status; 200 on redelivery; 500 when user code fails", async () => {
    const { pay } = clientWithStatus([saleStatus()])
    const seen: Array<[ConfirmedCallback, StatusReply | undefined]> = []
    let fail = true
    const handler = pay.callbackHandler({
      onCallback: async (cb, current) => {
        if (fail) {
          fail = false
          throw new Error("db down")
        }
        seen.push([cb, current])
      }
    })
    const p = signed(base)
    expect((await handler(get(p))).status).toBe(500)
    expect((await handler(get(p))).status).toBe(200)
    expect((await handler(get(p))).status).toBe(200)
    expect(seen).toHaveLength(1)
    expect(seen[0]![0]).toMatchObject({ type: "sale", amount: "10.00", currency: "USD", confirmedByStatus: true, orderOutcome: "approved" })
    expect(seen[0]![1]).toMatchObject({ status: "approved", "paynet-order-id": "123" })
    expect((await handler(get(signed(base, "wrong-key")))).status).toBe(403)
    expect(seen).toHaveLength(1)
  })

  it("without a serial number of its own, only the order's whole total proves a return: two 5.00 returns stay unconfirmed, one 10.00 is delivered once", async () => {
    // The order shows 10.00 returned, the last transaction a return (A2/002); this client made none
    // of them (no intents), so no transaction can be looked up by serial number.
    const { pay } = clientWithStatus([saleStatus({ "transaction-type": "return", "returned-amount": "10.00", "approval-code": "A2", "processor-rrn": "002" })])
    const seen: Array<string> = []
    const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(`${cb.type}:${cb.amount}:${cb.claims["processor-rrn"]}:${cb.serialNumber}`) })
    const first = signed({ ...base, type: "reversal", amount: "5.00", "approval-code": "A1", "processor-rrn": "001" })
    const second = signed({ ...base, type: "reversal", amount: "5.00", "approval-code": "A2", "processor-rrn": "002" })
    // 5.00 within 10.00 proves nothing: unconfirmed, the gateway keeps retrying.
    for (const p of [first, second, first]) expect((await handler(get(p))).status, p.toString()).toBe(500)
    const whole = signed({ ...base, type: "reversal", amount: "10.00", "approval-code": "A2", "processor-rrn": "002" })
    expect((await handler(get(whole))).status).toBe(200)
    expect((await handler(get(whole))).status).toBe(200)
    // The whole total vouches once per order: a variant of it (other unsigned bytes) is refused, one
    // naming another transaction's approval code is not proven.
    expect((await handler(get(signed({ ...base, type: "reversal", amount: "10.00", "approval-code": "A2", "processor-rrn": "002", descriptor: "X" })))).status).toBe(403)
    expect((await handler(get(signed({ ...base, type: "reversal", amount: "10.00", "approval-code": "A1", "processor-rrn": "001" })))).status).toBe(500)
    expect(seen).toEqual(["reversal:10.00:002:undefined"])
  })

  it("a sale's callback arrives once however its unsigned fields vary (the customer's own return page re-posted)", async () => {
    const { pay } = clientWithStatus([saleStatus()])
    let runs = 0
    const handler = pay.callbackHandler({ onCallback: () => void runs++ })
    expect((await handler(get(signed({ ...base, "approval-code": "A1" })))).status).toBe(200)
    const returnPage = signed({ ...base, descriptor: "SHOP", error_code: "0", error_message: "null" })
    const post = new Request("https://shop.example.com/cb", { method: "POST", body: returnPage, headers: { "Content-Type": "application/x-www-form-urlencoded" } })
    expect((await handler(post)).status).toBe(200)
    expect((await handler(get(signed({ ...base, "x-extra": "1" })))).status).toBe(200)
    expect(runs).toBe(1)
    // A different signed status of the same order is a different event.
    const { pay: later } = clientWithStatus([statusOk("declined", { amount: "10.00", currency: "USD", "transaction-type": "sale" })])
    const h2 = later.callbackHandler({ onCallback: () => void runs++ })
    expect((await h2(get(signed({ ...base, status: "declined" })))).status).toBe(200)
    expect(runs).toBe(2)
  })

  it("a replayed callback with a changed amount or type never reaches onCallback (403)", async () => {
    const { pay } = clientWithStatus([saleStatus()])
    const seen: Array<string> = []
    const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(cb.amount) })
    for (const forged of [
      signed({ ...base, amount: "1000.00" }),
      signed({ ...base, type: "rebill", amount: "10.00" }),
      signed({ ...base, type: "capture", amount: "10.00" }),
      signed({ ...base, type: "reversal", amount: "10.00" }),
      signed({ ...base, type: "void" }),
      signed({ ...base, currency: "EUR" })
    ]) {
      expect((await handler(get(forged))).status, forged.toString()).toBe(403)
    }
    // A chargeback the order does not show yet cannot be confirmed: 500, the gateway retries later.
    expect((await handler(get(signed({ ...base, type: "chargeback" })))).status).toBe(500)
    // The customer's own 3DS return page (signed fields only) is no callback.
    expect((await handler(get(signed({ status: "approved", orderid: "123", client_orderid: "c-1" }))))).toMatchObject({ status: 403 })
    expect(seen).toEqual([])
    expect((await handler(get(signed(base)))).status).toBe(200)
    expect(seen).toEqual(["10.00"])
  })

  it("a stale 'sale approved' after the refund is handed over with the current status saying refunded", async () => {
    const { pay } = clientWithStatus([saleStatus({ "transaction-type": "return", "returned-amount": "10.00" })])
    const seen: Array<ConfirmedCallback> = []
    const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(cb) })
    expect((await handler(get(signed(base)))).status).toBe(200)
    expect(seen[0]).toMatchObject({ status: "approved", type: "sale", orderOutcome: "refunded" })
  })

  it("two simultaneous deliveries run onCallback once", async () => {
    const { pay } = clientWithStatus([saleStatus()])
    let runs = 0
    let release: () => void = () => {}
    const gate = new Promise<void>((r) => (release = r))
    const handler = pay.callbackHandler({
      onCallback: async () => {
        runs++
        await gate
      }
    })
    const p = signed(base)
    const a = handler(get(p))
    const b = handler(get(p))
    const second = await b
    release()
    const first = await a
    expect(runs).toBe(1)
    expect([first.status, second.status].sort()).toEqual([200, 500])
    expect((await handler(get(p))).status).toBe(200)
    expect(runs).toBe(1)
  })

  it("a failing claim store answers 500 (the gateway retries) and runs nothing", async () => {
    const { pay } = clientWithStatus([saleStatus()])
    let runs = 0
    const broken: CallbackClaimStore = { claim: () => Promise.reject(new Error("db down")), complete: () => {}, release: () => {} }
    const handler = pay.callbackHandler({ onCallback: () => void runs++, claims: broken })
    expect((await handler(get(signed(base)))).status).toBe(500)
    const throwing: CallbackClaimStore = { claim: () => { throw new Error("boom") }, complete: () => {}, release: () => {} }
    expect((await pay.callbackHandler({ onCallback: () => void runs++, claims: throwing })(get(signed(base)))).status).toBe(500)
    expect(runs).toBe(0)
  })

  it("status failing → 500; confirmClaims: false skips the status check and hands over the claims", async () => {
    const { pay } = clientWithStatus([{ status: 500, body: { type: "error", "serial-number": "s", "error-message": "x", "error-code": "internal-error" } }])
    const seen: Array<[ConfirmedCallback, StatusReply | undefined]> = []
    expect((await pay.callbackHandler({ onCallback: (cb, s) => void seen.push([cb, s]) })(get(signed(base)))).status).toBe(500)
    const optOut = pay.callbackHandler({ onCallback: (cb, s) => void seen.push([cb, s]), confirmClaims: false, claims: memoryCallbackStore() })
    expect((await optOut(get(signed(base)))).status).toBe(200)
    expect(seen).toHaveLength(1)
    expect(seen[0]![0]).toMatchObject({ confirmedByStatus: false, amount: "10.00", orderOutcome: undefined })
    expect(seen[0]![1]).toBeUndefined()
  })
})
