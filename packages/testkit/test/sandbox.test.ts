/**
 * The sandbox's windows (issue 16): the request log, the signature explainer, the test routes
 * for settle / redelivery / decline-next, and the dashboard's HTML and actions in process. The
 * dashboard in Chromium (layout, axe, screenshots) is test/dashboard.e2e.test.ts.
 */
import { describe, expect, it } from "vitest"
import { signControl, signOAuth } from "@paykit/signing"
import { createSimulator, formatRequestLine, requests, testMerchant, type Simulator } from "../src/index"
import { RequestLog } from "../src/http/request-log"
import { BASE, callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

const post = (sim: Simulator, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  sim.fetch(new Request(`${BASE}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }) }))
const getJson = async (sim: Simulator, path: string) => (await sim.fetch(new Request(`${BASE}${path}`))).json() as Promise<any>
const action = (sim: Simulator, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  sim.fetch(new Request(`${BASE}/__sim/ui/action`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", ...headers }, body: new URLSearchParams(fields).toString(), redirect: "manual" }))
const page = async (sim: Simulator, path = "/__sim/ui") => (await sim.fetch(new Request(`${BASE}${path}`))).text()
const noteOf = (res: Response) => {
  const location = res.headers.get("location")!
  const params = new URL(location, BASE).searchParams
  return { note: params.get("note"), ok: params.get("ok") === "1", location }
}

/** An approved sale with a callback receiver; the clock moved past processing. */
async function approvedSale(sim: Simulator, pan = "4111111111111111") {
  const fields = requests.sale({ credit_card_number: pan, server_callback_url: "https://merchant.example/cb?secret-token=s3cr3t" })
  const reply = await signedRequest(sim, "SALE", fields)
  await sim.clock.advance(5_000)
  return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
}

describe("request log", () => {
  it("records each request as time, operation, client_orderid, status, error code and ms; never the body", async () => {
    const sim = createSimulator()
    const before = Date.now()
    const ok = await approvedSale(sim)
    await signedRequest(sim, "SALE", requests.sale({ client_orderid: "bad-one" }), { controlKey: "wrong-key" })
    await post(sim, "/__sim/clock/advance?ms=1")
    const after = Date.now()
    const entries = sim.requests.entries()
    expect(entries.map((e) => [e.operation, e.clientOrderId, e.status, e.errorCode])).toEqual([
      ["SALE", ok.client_orderid, 200, undefined],
      ["SALE", "bad-one", 400, "control-mismatch"],
      ["test-route", undefined, 200, undefined]
    ])
    for (const e of entries) {
      expect(e.ms).toBeGreaterThanOrEqual(0)
      // The wall time of the request (not the simulator's clock, which the third one moved).
      expect(e.at).toBeGreaterThanOrEqual(before)
      expect(e.at).toBeLessThanOrEqual(after)
    }
    const dump = JSON.stringify(entries)
    expect(dump).not.toContain("4111111111111111")
    expect(dump).not.toContain(testMerchant.controlKey)
    expect(dump).not.toContain("cvv")
    expect(formatRequestLine(entries[1]!)).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z POST SALE client_orderid=bad-one 400 control-mismatch [0-9.]+ms$/)
    expect(formatRequestLine(entries[2]!)).toMatch(/ POST \/__sim\/clock\/advance client_orderid=- 200 - [0-9.]+ms$/)
    // GET /__sim/requests answers the same, after a sequence number; its own polls are not logged.
    expect((await getJson(sim, `/__sim/requests?after=${entries[1]!.seq}`)).map((e: any) => e.path)).toEqual(["/__sim/clock/advance"])
    expect(sim.requests.entries()).toHaveLength(3)
    await sim.close()
  })

  it("keeps only the newest records, tells subscribers of each, and quotes a value that could forge a line", () => {
    const log = new RequestLog(3)
    const seen: string[] = []
    const stop = log.subscribe((r) => seen.push(r.clientOrderId ?? "-"))
    for (let i = 1; i <= 5; i++) {
      log.add({ at: Date.now(), method: "POST", path: "/api/v2/sale/1001", status: 200, ms: 1 }, JSON.stringify({ "merchant-order-id": `o${i}` }))
    }
    stop()
    log.add({ at: Date.now(), method: "POST", path: "/api/v2/sale/group/2001", status: 400, ms: 1 }, JSON.stringify({ "merchant-order-id": "x 200 -\nforged", "error-code": "invalid-field" }))
    log.add({ at: Date.now(), method: "POST", path: "/api/v2/status/1001", status: 0, ms: 1 })
    expect(seen).toEqual(["o1", "o2", "o3", "o4", "o5"])
    const kept = log.entries()
    expect(kept.map((r) => r.seq)).toEqual([5, 6, 7])
    expect(kept[1]!.operation).toBe("SALE")
    const line = formatRequestLine(kept[1]!)
    expect(line.split("\n")).toHaveLength(1)
    expect(line).toContain("client_orderid=x?200?-?forged 400 invalid-field")
    expect(formatRequestLine(kept[2]!)).toMatch(/ STATUS client_orderid=- 0 - /)
  })
})

describe("signature explainer (test mode)", () => {
  it("a control-mismatch names the scheme, the field order and the minor-unit amount, never the key or the expected digest", async () => {
    const sim = createSimulator()
    const fields = requests.sale({ amount: "1000", currency: "JPY" })
    const reply = await signedRequest(sim, "SALE", fields, { controlKey: "not-the-key" })
    expectError(reply, "control-mismatch")
    const message = String(reply.body["error-message"])
    expect(message).toContain("computed C6 = lowercase hex SHA-1")
    expect(message).toContain(`endpointId (${testMerchant.endpointId}, from the URL) + client_orderid + amount + email + the merchant control key (never shown)`)
    expect(message).toContain("amount entered as 100000 (1000 JPY in minor units, cents: × 100 for every currency)")
    const expected = signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
    expect(message).not.toContain(expected)
    expect(message.toLowerCase()).not.toContain(expected.toLowerCase())
    expect(message).not.toContain(testMerchant.controlKey)
    expect(message).not.toContain(fields.email!)
    await sim.close()
  })

  it("an iso4217 merchant's amount is explained in the currency's exponent", async () => {
    const sim = createSimulator({ merchants: [{ login: "iso", controlKey: "iso-key", endpointIds: [7], minorUnits: "iso4217" }] })
    const reply = await signedRequest(sim, "SALE", requests.sale({ amount: "1000", currency: "JPY" }), { endpointId: 7, controlKey: "other", login: "iso" })
    expect(String(reply.body["error-message"])).toContain("amount entered as 1000 (1000 JPY in minor units, the currency's ISO 4217 exponent)")
    expect(String(reply.body["error-message"])).not.toContain("iso-key")
    await sim.close()
  })

  it("an oauth-bad-signature names the method, the base-string URI and the sorted parameter names, never the key or the signature", async () => {
    const sim = createSimulator()
    const fields = requests.payout()
    const timestamp = Math.floor(Date.now() / 1000)
    const reply = await signedRequest(sim, "PAYOUT", fields, { controlKey: "wrong-secret", timestamp, nonce: "n-explain-1" })
    expectError(reply, "oauth-bad-signature")
    const message = String(reply.body["error-message"])
    expect(message).toContain("HMAC-SHA1 keyed with the percent-encoded control key + \"&\" (never shown)")
    expect(message).toContain(`POST&${encodeURIComponent(`${BASE}/api/v2/payout/${testMerchant.endpointId}`)}&`)
    const names = [...Object.keys(fields), "oauth_consumer_key", "oauth_nonce", "oauth_signature_method", "oauth_timestamp", "oauth_version"].sort()
    expect(message).toContain(names.join(", "))
    expect(message).toContain(`amount entered as sent (${fields.amount}), not in minor units`)
    const right = signOAuth({ url: `${BASE}/api/v2/payout/${testMerchant.endpointId}`, params: Object.entries(fields), consumerKey: testMerchant.login, signatureMethod: "HMAC-SHA1", consumerSecret: testMerchant.controlKey }, { timestamp, nonce: "n-explain-1" })
    const signature = right.signature
    expect(message).not.toContain(right.baseString)
    expect(message).not.toContain(signature)
    expect(message).not.toContain(encodeURIComponent(signature))
    expect(message).not.toContain(testMerchant.controlKey)
    expect(message).not.toContain(fields.credit_card_number ?? "no-card")
    expect(message.length).toBeLessThanOrEqual(1024)
    await sim.close()
  })

  it("an RSA-SHA256 signature from another key is explained with the public-key method", async () => {
    const sim = createSimulator()
    const reply = await signedRequest(sim, "PAYOUT_V4_CHECK", requests.payoutCheck(), { mutate: (init) => void (init.fields["amount"] = "99.99") })
    expectError(reply, "oauth-bad-signature")
    expect(String(reply.body["error-message"])).toContain("RSA-SHA256, verified with the merchant's RSA public key")
    await sim.close()
  })

  it("testMode: false answers as tersely as the gateway", async () => {
    const sim = createSimulator({ testMode: false })
    const reply = await signedRequest(sim, "SALE", requests.sale(), { controlKey: "nope" })
    expect(reply.body["error-message"]).toBe("control: does not match the digest of this request.")
    const oauth = await signedRequest(sim, "PAYOUT", requests.payout(), { controlKey: "nope" })
    expectError(oauth, "oauth-bad-signature")
    expect(String(oauth.body["error-message"])).not.toContain("Test mode explains")
    await sim.close()
  })
})

describe("test routes: settle, redeliver, decline-next", () => {
  it("POST /__sim/orders/{id}/settle settles now, once; then a chargeback is allowed", async () => {
    const sim = createSimulator()
    const { orderid } = await approvedSale(sim)
    expect((await post(sim, `/__sim/orders/${orderid}/chargeback`)).status).toBe(409)
    const settled = await post(sim, `/__sim/orders/${orderid}/settle`)
    expect(settled.status).toBe(200)
    expect((await settled.json() as any).order.settled).toBe(true)
    const again = await post(sim, `/__sim/orders/${orderid}/settle`)
    expect([again.status, (await again.json() as any).code]).toEqual([409, "settle-not-allowed"])
    expect((await post(sim, `/__sim/orders/${orderid}/chargeback`)).status).toBe(200)
    expect((await post(sim, "/__sim/orders/999999/settle")).status).toBe(404)
    expect(sim.checkInvariants()).toEqual([])
    await sim.close()
  })

  it("POST /__sim/callbacks/{i}/redeliver sends the same query again as one more attempt, not retried", async () => {
    let answer = 200
    const receiver = callbackReceiver(() => answer)
    const sim = createSimulator({ callbackFetch: receiver.fetch })
    const { orderid } = await approvedSale(sim)
    expect(receiver.received).toHaveLength(1)
    const res = await post(sim, "/__sim/callbacks/0/redeliver")
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ orderid, attempt: 2, outcome: 200 })
    expect(receiver.received[1]).toEqual(receiver.received[0])
    answer = 500
    await post(sim, "/__sim/callbacks/0/redeliver")
    await sim.clock.advance(24 * 60 * 60 * 1000)
    expect(sim.callbackAttempts().map((a) => [a.attempt, a.outcome])).toEqual([[1, 200], [2, 200], [3, 500]])
    expect((await post(sim, "/__sim/callbacks/7/redeliver")).status).toBe(404)
    // A restored simulator keeps the log but not the callbacks' fields: it says so instead of guessing.
    const restored = createSimulator({ restore: sim.snapshot(), callbackFetch: receiver.fetch })
    const refused = await post(restored, "/__sim/callbacks/0/redeliver")
    expect([refused.status, ((await refused.json()) as any).code]).toEqual([409, "callback-not-redeliverable"])
    await restored.close()
    await sim.close()
  })

  it("POST /__sim/decline-next declines the next matching payment whatever the card, then the card decides again", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    expect((await post(sim, "/__sim/decline-next", { operation: "PREAUTH" })).status).toBe(200)
    const sale = requests.sale()
    const saleReply = await signedRequest(sim, "SALE", sale)
    expect((await statusOf(sim, String(saleReply.body["paynet-order-id"]), sale.client_orderid)).status).toBe("approved")
    const preauth = requests.preauth()
    const preauthReply = await signedRequest(sim, "PREAUTH", preauth)
    const declined = await statusOf(sim, String(preauthReply.body["paynet-order-id"]), preauth.client_orderid)
    expect(declined).toMatchObject({ status: "declined", "error-code": "05" })
    const after = requests.preauth()
    const afterReply = await signedRequest(sim, "PREAUTH", after)
    expect((await statusOf(sim, String(afterReply.body["paynet-order-id"]), after.client_orderid)).status).toBe("approved")
    // An empty body: any payment; a merchant filter that matches nobody never fires.
    expect((await post(sim, "/__sim/decline-next", { merchant: "nobody" })).status).toBe(400)
    expect(await (await post(sim, "/__sim/decline-next", { count: 2 })).json()).toMatchObject({ ok: true, operation: "*", count: 2, pending: 2 })
    expect((await post(sim, "/__sim/decline-next", { operation: "VOID" })).status).toBe(400)
    expect((await post(sim, "/__sim/decline-next", "{not json")).status).toBe(400)
    await post(sim, "/__sim/reset")
    const clean = requests.sale()
    const cleanReply = await signedRequest(sim, "SALE", clean)
    expect((await statusOf(sim, String(cleanReply.body["paynet-order-id"]), clean.client_orderid)).status).toBe("approved")
    await sim.close()
  })
})

describe("dashboard (in process)", () => {
  it("is off unless asked for", async () => {
    const sim = createSimulator()
    expect((await sim.fetch(new Request(`${BASE}/__sim/ui`))).status).toBe(404)
    expect((await action(sim, { action: "reset" })).status).toBe(404)
    await sim.close()
  })

  it("shows orders with ledger figures, transactions and callbacks; a card only as BIN and last four; no key, control or callback secret", async () => {
    const receiver = callbackReceiver()
    const sim = createSimulator({ dashboard: true, callbackFetch: receiver.fetch })
    const { orderid, client_orderid } = await approvedSale(sim, "4000000000001976")
    const html = await page(sim)
    expect(html).toContain(`id="order-${orderid}"`)
    expect(html).toContain(client_orderid)
    expect(html).toContain("400000******1976")
    expect(html).toMatch(/<dt>Captured<\/dt><dd>[0-9.]+<\/dd>/)
    expect(html).toContain("Callback attempts")
    expect(html).toContain(">HTTP 200<")
    expect(html).toMatch(/<td class="op">SALE<\/td><td>[^<]+<\/td><td class="">200<\/td>/)
    for (const secret of ["4000000000001976", "cvv2", testMerchant.controlKey, "s3cr3t", "PRIVATE KEY", receiver.received[0]!["control"]!]) expect(html).not.toContain(secret)
    await sim.close()
  })

  it("runs every action through its test route and says what happened; refuses another origin", async () => {
    let answer = 200
    const receiver = callbackReceiver(() => answer)
    const sim = createSimulator({ dashboard: true, callbackFetch: receiver.fetch })
    const { orderid } = await approvedSale(sim)
    const before = sim.clock.now()
    let res = await action(sim, { action: "advance", minutes: "10" })
    expect(res.status).toBe(303)
    expect(noteOf(res).note).toMatch(/^Clock advanced by 10 minutes; now /)
    expect(sim.clock.now() - before).toBe(600_000)
    expect(noteOf(await action(sim, { action: "advance", minutes: "-1" }))).toMatchObject({ ok: false, note: expect.stringMatching(/^minutes:/) })
    res = await action(sim, { action: "settle", orderid })
    expect(noteOf(res)).toMatchObject({ ok: true, note: `Order ${orderid} settled` })
    expect(noteOf(res).location).toMatch(new RegExp(`#order-${orderid}$`))
    expect(noteOf(await action(sim, { action: "chargeback", orderid, amount: "1.00" }))).toMatchObject({ ok: true, note: expect.stringMatching(new RegExp(`^Order ${orderid} charged back 1.00 `)) })
    expect(noteOf(await action(sim, { action: "fail-callback", count: "1" })).ok).toBe(true)
    const failedRedelivery = noteOf(await action(sim, { action: "redeliver", index: "0", orderid }))
    expect(failedRedelivery).toMatchObject({ ok: false, note: expect.stringContaining("failed, simulated: merchant callback endpoint down") })
    expect(noteOf(await action(sim, { action: "redeliver", index: "0", orderid }))).toMatchObject({ ok: true, note: expect.stringContaining("answered HTTP 200") })
    answer = 200
    expect(noteOf(await action(sim, { action: "decline-next" })).note).toBe("The next payment will be declined (1 queued)")
    expect(await page(sim)).toContain("1 decline queued.")
    const note = await page(sim, `/__sim/ui?note=${encodeURIComponent("<script>alert(1)</script>")}&ok=1`)
    expect(note).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect((await action(sim, { action: "reset" }, { origin: "https://evil.example" })).status).toBe(403)
    expect(sim.orders()).toHaveLength(1)
    expect(noteOf(await action(sim, { action: "reset" }, { origin: BASE })).ok).toBe(true)
    expect(sim.orders()).toHaveLength(0)
    expect(await page(sim)).toContain("No orders yet.")
    expect(noteOf(await action(sim, { action: "nope" })).ok).toBe(false)
    await sim.close()
  })
})
