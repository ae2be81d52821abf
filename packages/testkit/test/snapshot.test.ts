/**
 * sim.snapshot() and createSimulator({ restore }): a restart that keeps the state. Every test
 * closes the first simulator and continues in a NEW one built from the snapshot (most of them
 * through JSON.stringify / JSON.parse, as `paykit-sim --state` does; that process itself is
 * state-file-bin.heavy.test.ts).
 */
import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testCards, testMerchant, type Simulator, type SimulatorOptions, type SimulatorSnapshot } from "../src/index"
import { callbackReceiver, expectError, signedRequest, statusOf } from "./helpers"

const START = Date.UTC(2030, 0, 15, 12)
const CALLBACK = "https://merchant.example/cb?secret-token=abc"
const login = testMerchant.login

const open: Simulator[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()))
})

function sim(options: SimulatorOptions = {}): Simulator {
  const s = createSimulator({ startTime: START, ...options })
  open.push(s)
  return s
}

/** Snapshot → close → JSON round trip → a NEW simulator from it. */
async function restart(old: Simulator, options: SimulatorOptions = {}): Promise<Simulator> {
  const snapshot = old.snapshot()
  await old.close()
  return sim({ ...options, restore: JSON.parse(JSON.stringify(snapshot)) as SimulatorSnapshot })
}

const idOf = (reply: { body: Record<string, unknown> }) => String(reply.body["paynet-order-id"])

describe("snapshot and restore", () => {
  it("an approved preauth survives: capture and status work in the new simulator, ids and totals continue", async () => {
    const first = sim()
    const fields = requests.preauth({ amount: "25.00" })
    const preauth = await signedRequest(first, "PREAUTH", fields)
    await first.clock.advance(2000)
    const ids = { orderid: idOf(preauth), client_orderid: fields.client_orderid }
    expect(first.order(ids.orderid)?.status).toBe("approved")
    const ref = await signedRequest(first, "CARDREF", requests.createCardRef(ids))
    const now = first.clock.now()

    const second = await restart(first)
    expect(second.clock.now()).toBe(now)
    expect(second.order(ids.orderid)).toMatchObject({ status: "approved", amount: "25.00", card: { masked: "411111******1111" } })

    const capture = await signedRequest(second, "CAPTURE", requests.capture({ ...ids, amount: "10.00", currency: "USD" }))
    expect(capture.status).toBe(200)
    await second.clock.advance(2000)
    expect(await statusOf(second, ids.orderid, ids.client_orderid)).toMatchObject({ status: "approved", "transaction-type": "capture", "captured-amount": "10.00" })
    // Totals continue: only 15.00 is left of the hold.
    expectError(await signedRequest(second, "CAPTURE", requests.capture({ ...ids, amount: "15.01", currency: "USD" })), "capture-exceeds-authorized")
    expect((await signedRequest(second, "CAPTURE", requests.capture({ ...ids, amount: "15.00", currency: "USD" }))).status).toBe(200)
    await second.clock.advance(2000)
    expect(second.order(ids.orderid)?.captured).toBe("25.00")

    // The next orderid follows the last one; the card ref made before still rebills.
    const rebill = await signedRequest(second, "REBILL", requests.makeRebill({ cardrefid: String(ref.body["card-ref-id"]) }))
    expect(rebill.status).toBe(200)
    expect(Number(idOf(rebill))).toBe(Number(ids.orderid) + 1)
    await second.clock.advance(2000)
    expect(second.order(idOf(rebill))?.status).toBe("approved")
  })

  it("a sale still processing at snapshot time finalises after restore and its callback is delivered", async () => {
    const first = sim({ callbackFetch: callbackReceiver().fetch })
    const fields = requests.sale({ server_callback_url: CALLBACK })
    const sale = await signedRequest(first, "SALE", fields)
    await first.clock.advance(1000)
    const snapshot = first.snapshot()
    expect(snapshot.pendingJobs).toEqual([{ at: START + 2000, kind: "finalize", orderid: idOf(sale), tx: 0, final: { status: "approved" } }])

    const receiver = callbackReceiver()
    const second = await restart(first, { callbackFetch: receiver.fetch })
    expect(second.order(idOf(sale))?.status).toBe("processing")
    await second.clock.advance(999)
    expect(second.order(idOf(sale))?.status).toBe("processing")
    await second.clock.advance(1)
    expect(second.order(idOf(sale))?.status).toBe("approved")
    expect(receiver.received).toHaveLength(1)
    expect(receiver.received[0]).toMatchObject({ orderid: idOf(sale), client_orderid: fields.client_orderid, status: "approved", "secret-token": "abc" })
    // The new simulator queued the settlement when it finalised the sale.
    await second.clock.advance(24 * 3600_000)
    expect(second.order(idOf(sale))?.settled).toBe(true)
  })

  it("a pending settlement queued before the snapshot still settles after restore", async () => {
    const first = sim({ processingDelayMs: 0 })
    const fields = requests.sale()
    const sale = await signedRequest(first, "SALE", fields)
    await first.clock.advance(0)
    const second = await restart(first)
    expect(second.order(idOf(sale))?.settled).toBe(false)
    await second.clock.advance(24 * 3600_000)
    expect(second.order(idOf(sale))?.settled).toBe(true)
    expectError(await signedRequest(second, "VOID", requests.void({ orderid: idOf(sale), client_orderid: fields.client_orderid })), "void-not-allowed")
  })

  it("a callback that failed before the snapshot is retried after restore (attempt 2, on schedule)", async () => {
    const down = callbackReceiver(() => 503)
    const first = sim({ callbackFetch: down.fetch, processingDelayMs: 0 })
    const sale = await signedRequest(first, "SALE", requests.sale({ server_callback_url: CALLBACK }))
    await first.clock.advance(0)
    expect(first.callbackAttempts()).toEqual([expect.objectContaining({ attempt: 1, outcome: 503 })])

    const up = callbackReceiver()
    const second = await restart(first, { callbackFetch: up.fetch })
    expect(second.callbackAttempts()).toEqual([expect.objectContaining({ orderid: idOf(sale), attempt: 1, outcome: 503, at: START })])
    await second.clock.advance(9_999)
    expect(up.received).toHaveLength(0)
    await second.clock.advance(1)
    expect(up.received).toHaveLength(1)
    expect(second.callbackAttempts().map((a) => [a.attempt, a.outcome, a.at - START])).toEqual([[1, 503, 0], [2, 200, 10_000]])
    expect(down.attempts()).toBe(1)
  })

  it("a recurring payment fires after restore, with its callback, and the schedule continues", async () => {
    const first = sim({ callbackFetch: callbackReceiver().fetch })
    const fields = requests.createRecurringPayment({ period: "day", interval: "1", server_callback_url: CALLBACK })
    const reply = await signedRequest(first, "CREATE_RP_V4", fields)
    const rp = String(reply.body["recurring-payment-id"])
    await first.clock.advance(25 * 3600_000) // the first charge (day 1)
    expect(first.orders().filter((o) => o.kind === "rebill")).toHaveLength(1)

    const receiver = callbackReceiver()
    const second = await restart(first, { callbackFetch: receiver.fetch })
    await second.clock.advance(24 * 3600_000) // day 2
    const rebills = second.orders().filter((o) => o.kind === "rebill")
    expect(rebills.map((o) => o.client_orderid)).toEqual([`${fields["client-orderid"]}-1`, `${fields["client-orderid"]}-2`])
    expect(rebills.every((o) => o.status === "approved" && o.recurringPaymentId === rp)).toBe(true)
    expect(receiver.received.filter((r) => r["type"] === "rebill")).toEqual([expect.objectContaining({ client_orderid: `${fields["client-orderid"]}-2`, status: "approved" })])
  })

  it("a repeated client_orderid after restore returns the same order; a different card under it is a conflict", async () => {
    const first = sim()
    const fields = requests.sale({ credit_card_number: "5555555555554444" })
    const original = await signedRequest(first, "SALE", fields)
    const second = await restart(first)
    const again = await signedRequest(second, "SALE", fields)
    expect(again.status).toBe(200)
    // The same order, answered with its current state (a new serial-number: it is a new reply).
    const { "serial-number": _a, ...againRest } = again.body
    const { "serial-number": _o, ...originalRest } = original.body
    expect(againRest).toEqual(originalRest)
    expect(second.orders()).toHaveLength(1)
    expectError(await signedRequest(second, "SALE", { ...fields, credit_card_number: "4111111111111111" }), "client-orderid-conflict")
  })

  it("a nonce used before the snapshot is refused after restore", async () => {
    const first = sim()
    expect((await signedRequest(first, "PAYOUT", requests.payout(), { nonce: "restart-nonce-1" })).status).toBe(200)
    expect(first.snapshot().nonces).toEqual([expect.objectContaining({ consumerKey: login, nonce: "restart-nonce-1" })])
    const second = await restart(first)
    expectError(await signedRequest(second, "PAYOUT", requests.payout(), { nonce: "restart-nonce-1" }), "oauth-replayed-nonce")
    expect((await signedRequest(second, "PAYOUT", requests.payout(), { nonce: "restart-nonce-2" })).status).toBe(200)
  })

  it("3-D Secure and hosted-form states continue: the ACS page and the form page work after restore", async () => {
    const first = sim()
    const threeDS = await signedRequest(first, "SALE", requests.sale({ credit_card_number: "4000000000003220" }))
    const form = await signedRequest(first, "SALEFORM", requests.saleForm())
    const second = await restart(first)
    expect(second.order(idOf(threeDS))?.threeDS).toBe("method")
    const acs = await second.fetch(new Request(String(threeDS.body["redirect-url"]), { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "result=pass" }))
    expect(acs.status).toBe(200)
    expect(second.order(idOf(threeDS))).toMatchObject({ status: "approved", threeDS: "passed" })
    const page = await second.fetch(new Request(String(form.body["redirect-url"]), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ credit_card_number: "4111111111111111", card_printed_name: "A B", expire_month: "12", expire_year: "2099", cvv2: "123" }).toString()
    }))
    expect(page.status).toBe(200)
    expect(second.order(idOf(form))?.status).toBe("approved")
  })

  it("round-trips through JSON.stringify / JSON.parse: the restored simulator's snapshot is the same", async () => {
    const first = sim({ callbackFetch: callbackReceiver((n) => (n === 1 ? 500 : 200)).fetch })
    await signedRequest(first, "SALE", requests.sale({ server_callback_url: CALLBACK }))
    await signedRequest(first, "PREAUTH", requests.preauth({ amount: "1.000", currency: "KWD" }))
    await signedRequest(first, "CREATE_RP_V4", requests.createRecurringPayment({ period: "week", interval: "2" }))
    await signedRequest(first, "PAYOUT_V4_CHECK", requests.payoutCheck())
    await first.clock.advance(2000)
    await signedRequest(first, "SALE", requests.sale())
    const snapshot = first.snapshot()
    const text = JSON.stringify(snapshot)
    expect(JSON.parse(text)).toEqual(snapshot) // JSON-safe: nothing lost (no bigint, Map or undefined)
    expect(snapshot.version).toBe(2)
    expect(snapshot.orders.find((o) => o.currency === "KWD")?.amount).toBe("1000")
    expect(new Set(snapshot.pendingJobs.map((j) => j.kind))).toEqual(new Set(["finalize", "settle", "callback", "recurring-charge"]))
    const views = first.orders()
    const second = await restart(first)
    expect(second.orders()).toEqual(views)
    const again = second.snapshot()
    expect({ ...again, clock: { ...again.clock, wallOffsetMs: 0 } }).toEqual({ ...snapshot, clock: { ...snapshot.clock, wallOffsetMs: 0 } })
  })

  it("holds no PAN, CVV or key after card flows", async () => {
    const CVV = "9731"
    const first = sim({ callbackFetch: callbackReceiver().fetch })
    for (const card of testCards) {
      const fields = requests.sale({ credit_card_number: card.number, cvv2: CVV, server_callback_url: CALLBACK })
      const reply = await signedRequest(first, "SALE", fields)
      await first.clock.advance(11 * 60_000)
      await signedRequest(first, "CARDREF", requests.createCardRef({ orderid: idOf(reply), client_orderid: fields.client_orderid }))
    }
    await signedRequest(first, "PAYOUT", requests.payout({ credit_card_number: "5555555555554444" }))
    await signedRequest(first, "CREATE_RP_V4", requests.createRecurringPayment({ "credit-card-number": "4242424242424242", cvv2: CVV, period: "day", interval: "1" }))
    await signedRequest(first, "TRANSFER_V4", requests.transfer({ credit_card_number: "4111111111111111", "destination-card-no": "5555555555554444" }))
    const form = await signedRequest(first, "SALEFORM", requests.saleForm())
    await first.fetch(new Request(String(form.body["redirect-url"]), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ credit_card_number: "4111111111111111", card_printed_name: "A B", expire_month: "12", expire_year: "2099", cvv2: CVV }).toString()
    }))
    const threeDS = await signedRequest(first, "SALE", requests.sale({ credit_card_number: "4000000000003220", cvv2: CVV }))
    expect(idOf(threeDS)).toMatch(/^[0-9]+$/)

    const text = JSON.stringify(first.snapshot())
    expect(text).toContain("411111******1111")
    for (const pan of [...testCards.map((c) => c.number), "4242424242424242"]) expect(text).not.toContain(pan)
    expect(text).not.toContain(`"${CVV}"`)
    expect(text).not.toMatch(/cvv/i)
    expect(text).not.toContain(testMerchant.controlKey)
    expect(text).not.toContain("PRIVATE KEY")
  })

  it("refuses an unknown snapshot version, a non-snapshot and a merchant it does not know", async () => {
    const first = sim()
    await signedRequest(first, "SALE", requests.sale())
    const snapshot = first.snapshot()
    expect(() => createSimulator({ restore: { ...snapshot, version: 1 } as unknown as SimulatorSnapshot })).toThrow(/unsupported snapshot version 1; this @paykit\/testkit reads version 2/)
    expect(() => createSimulator({ restore: {} as SimulatorSnapshot })).toThrow(/unsupported snapshot version undefined/)
    expect(() => createSimulator({ restore: snapshot, merchants: [{ login: "other", controlKey: "K", endpointIds: [7] }] })).toThrow(/merchant "paykit-test", which this simulator is not configured with/)
  })

  it("a closed simulator changes nothing: requests get a dropped connection", async () => {
    const first = sim()
    const snapshot = first.snapshot()
    await first.close()
    await expect(signedRequest(first, "SALE", requests.sale())).rejects.toThrow("fetch failed")
    expect(first.orders()).toEqual([])
    expect(first.snapshot().counters).toEqual(snapshot.counters)
  })

  it("POST /__sim/snapshot answers the snapshot as JSON, over HTTP too", async () => {
    const first = sim()
    const server = await first.listen({ port: 0 })
    const fields = requests.sale()
    const sale = await signedRequest(first, "SALE", fields, { fetch: (r) => fetch(r), base: server.url })
    const res = await fetch(`${server.url}/__sim/snapshot`, { method: "POST" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/json")
    const snapshot = (await res.json()) as SimulatorSnapshot
    expect(snapshot.version).toBe(2)
    await first.close()
    const second = sim({ restore: snapshot })
    expect(second.order(idOf(sale))?.client_orderid).toBe(fields.client_orderid)
  })
})
