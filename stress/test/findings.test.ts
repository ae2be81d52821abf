/**
 * Bugs the stress suites found in the packages, each as a test of the behaviour it SHOULD have.
 * An open one is marked `it.fails` (it fails today) only so that the suite stays green while its
 * owner fixes it; when the fix lands, vitest reports the `it.fails` as failing and the marker goes.
 *
 * 1. @paykit/client callback parameter pollution (packages/client/src/callbacks/handler.ts, verifyCallback,
 *    lines 66-74): `control` is checked against the FIRST `status` / `orderid` / `client_orderid`
 *    of the query (`params.get`), but the callback handed to the merchant is decoded from
 *    `Object.fromEntries(params)`, i.e. the LAST occurrence of each name. Anyone holding one
 *    genuinely signed callback (their own declined order) can append `&status=approved` or
 *    `&client_orderid=<someone else's order>` and the handler passes the forged values to
 *    `onCallback` with a 200. Found by fuzz-client.heavy.test.ts (verifyCallback property).
 *    FIXED in the working tree at 06:40 UTC (verifyCallback now refuses a name sent twice and a
 *    merchant_order that differs from client_orderid); the tests below are its regression tests.
 *
 * 2. @paykit/testkit threeds-state messages do not name a field (packages/testkit/src/rules/threeds.ts,
 *    assertFits, lines 57 and 59): `3DS: order 1000001 has no 3-D Secure step` /
 *    `3DS: cres does not fit state method (…)`. Every other 400 starts with the wire field it is
 *    about (`orderid: no order …`); a client mapping errors to form fields cannot place this one.
 *    Expected: `orderid: …` (the order whose 3DS state refuses the upload). Found by
 *    fuzz-simulator.heavy.test.ts. FIXED: the messages now start with `orderid:`.
 */
import { createPayClient } from "@paykit/client"
import { callbackControl, signControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import { errorCodeOf, formHeaders, send } from "../src/wire"
import { describe, expect, it } from "vitest"

const pay = createPayClient({ baseUrl: "http://sim.test", login: testMerchant.login, controlKey: testMerchant.controlKey, endpointId: testMerchant.endpointId })

/** A genuinely signed callback: order 1000001 of client_orderid "mine" was DECLINED. */
function signedDeclined(): URLSearchParams {
  const fields = { status: "declined", orderid: "1000001", merchant_order: "mine", client_orderid: "mine", type: "sale", amount: "10.00", currency: "USD" }
  return new URLSearchParams({ ...fields, control: callbackControl(fields, testMerchant.controlKey) })
}

describe("finding 1: callback parameter pollution (client verifyCallback / callbackHandler)", () => {
  it("the untampered signed callback verifies (the control is right)", async () => {
    expect((await pay.verifyCallback(signedDeclined())).status).toBe("declined")
  })

  it("verifyCallback refuses `status` appended a second time (declined → approved)", async () => {
    const polluted = signedDeclined()
    polluted.append("status", "approved")
    await expect(pay.verifyCallback(polluted)).rejects.toMatchObject({ _tag: "CallbackSignatureError" })
  })

  it("verifyCallback refuses `client_orderid` appended a second time (another merchant order)", async () => {
    const polluted = signedDeclined()
    polluted.append("client_orderid", "victim-order")
    await expect(pay.verifyCallback(polluted)).rejects.toMatchObject({ _tag: "CallbackSignatureError" })
  })

  it("callbackHandler refuses it and never hands a forged status to onCallback", async () => {
    const seen: string[] = []
    const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(`${cb.client_orderid}:${cb.status}`) })
    const polluted = signedDeclined()
    polluted.append("status", "approved")
    const response = await handler(new Request(`http://merchant.test/cb?${polluted}`))
    // Before the fix: 200, and onCallback saw "mine:approved" for an order the gateway declined.
    expect(response.status).not.toBe(200)
    expect(seen).toEqual([])
  })
})

describe("finding 2: threeds-state error-message names no field (testkit, fixed)", () => {
  it("a 3DS upload for an order without 3DS is refused with a message that starts with `orderid:`", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    try {
      const sign = (op: "SALE" | "TDS_UPLOAD_CRES_RESULT", fields: Record<string, string>) =>
        new URLSearchParams({ ...fields, control: signControl(op, fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId }) }).toString()
      const sale = requests.sale()
      const ack = await send(sim.fetch, `/api/v2/sale/${testMerchant.endpointId}`, sign("SALE", sale), formHeaders())
      const orderid = String((ack.json as Record<string, unknown>)["paynet-order-id"])
      const upload = requests.uploadCresResult({ "client-order-id": sale.client_orderid, orderid })
      const refused = errorCodeOf(await send(sim.fetch, `/api/3ds/v1/upload-cres-result/${testMerchant.endpointId}`, sign("TDS_UPLOAD_CRES_RESULT", upload), formHeaders()))
      expect(refused).toMatchObject({ ok: true, code: "threeds-state" })
      // Before the fix: "3DS: order … has no 3-D Secure step".
      expect(refused.ok ? refused.message : "").toMatch(/^orderid: /)
    } finally {
      await sim.close()
    }
  })
})
