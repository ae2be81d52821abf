/**
 * Attack suite: capture/return callbacks proven per transaction.
 * Genuine callbacks the simulator sends (collected, then delivered by the test), their variants with
 * changed unsigned fields, returns that release a preauth's hold, callbacks after a capture whose
 * reply was lost, two clients sharing only a claim store, and chargebacks replayed.
 */
import { beforeEach, describe, expect, it } from "vitest"
import { createPayClient, memoryCallbackStore, openMemoryStore, type CallbackClaimStore, type ConfirmedCallback, type PayClientOptions, type PromisePayClient } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { BASE_URL, clientOptions } from "../support/sim"
import { opOf } from "../support/attacks"
import { callbacksIn, collectingSimulator } from "../support/callback-world"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const CALLBACK_URL = "https://shop.example.com/paykit/callback"

function world() {
  const { sim, sent } = collectingSimulator()
  const client = (more: Partial<PayClientOptions> = {}) =>
    createPayClient(clientOptions(sim, { timeoutMs: 300, deadlineMs: 2000, reconcile: { settleMs: 60, pollIntervalMs: 5 }, ...more }))
  const settle = async () => {
    await sim.clock.advance(1)
    await new Promise((r) => setTimeout(r, 5))
  }
  const callbacksOf = (orderid: string, type?: string) => callbacksIn(sent, orderid, type)
  return { sim, client, settle, callbacksOf, sent }
}

function forge(query: string, changes: Record<string, string | undefined>): string {
  const p = new URLSearchParams(query)
  for (const [k, v] of Object.entries(changes)) v === undefined ? p.delete(k) : p.set(k, v)
  return p.toString()
}

// `claims: null`: the client's own claims (its store's, when it has one).
function recorder(pay: PromisePayClient, claims: CallbackClaimStore | null = memoryCallbackStore()) {
  const seen: Array<ConfirmedCallback> = []
  const handler = pay.callbackHandler(claims === null ? { onCallback: (cb) => void seen.push(cb) } : { claims, onCallback: (cb) => void seen.push(cb) })
  const deliver = async (query: string) => (await handler(new Request(`${CALLBACK_URL}?${query}`))).status
  return { seen, deliver }
}

async function paid(pay: PromisePayClient, settle: () => Promise<void>, kind: "sale" | "preauth", amount = "10.00") {
  const input = saleInput({ amount, server_callback_url: CALLBACK_URL })
  const ack = await pay[kind](input)
  await settle()
  return { client_orderid: input.client_orderid, orderid: String(ack["paynet-order-id"]) }
}

describe("attack: returns that release a preauth's hold", () => {
  it("the client's own 3.00 return on an uncaptured preauth: its genuine callback is delivered once (the release shows in hold-released-amount, not returned-amount; was refused 403 'contradicted')", async () => {
    const w = world()
    try {
      const pay = w.client()
      const order = await paid(pay, w.settle, "preauth")
      await pay.return({ ...order, amount: "3.00", currency: "USD" })
      await w.settle()
      const genuine = w.callbacksOf(order.orderid).filter((q) => new URLSearchParams(q).get("amount") === "3.00")
      expect(genuine).toHaveLength(1)
      const { seen, deliver } = recorder(pay)
      expect(await deliver(genuine[0]!)).toBe(200)
      expect(seen.map((c) => c.amount)).toEqual(["3.00"])
    } finally {
      await w.sim.close()
    }
  })
})

describe("attack: a capture whose reply was lost, then its callback and the merchant's retry", () => {
  it("capture reset after processing with status down (OutcomeUnknown): the genuine callback is proven once by the totals; the same-key retry reconciles; variants never run", async () => {
    const w = world()
    try {
      const clean = w.client()
      const order = await paid(clean, w.settle, "preauth")
      let statusDown = false
      let lose = true
      const pay = w.client({
        deadlineMs: 300,
        fetch: async (req) => {
          const op = opOf(req)
          if (op === "status" && statusDown) return new Response("", { status: 500 })
          if (op === "capture" && lose) {
            lose = false
            await w.sim.fetch(req)
            statusDown = true
            throw new TypeError("fetch failed", { cause: Object.assign(new Error("hang up"), { code: "ECONNRESET" }) })
          }
          return w.sim.fetch(req)
        }
      })
      const input = { ...order, amount: "4.00", currency: "USD" }
      const r = await pay.capture(input, { idempotencyKey: "cap-lost" }).then((v) => v as unknown as { _tag?: string }, (e: { _tag: string }) => e)
      expect(r._tag).toBe("OutcomeUnknown")
      statusDown = false
      await w.settle()
      const genuine = w.callbacksOf(order.orderid, "capture")
      expect(genuine).toHaveLength(1)
      const { seen, deliver } = recorder(pay)
      expect(await deliver(genuine[0]!)).toBe(200)
      const retry = await pay.capture(input, { idempotencyKey: "cap-lost" })
      expect(retry.type).toBe("reconciled")
      for (const f of [forge(genuine[0]!, { descriptor: "X" }), forge(genuine[0]!, { "approval-code": undefined, "processor-rrn": undefined }), forge(genuine[0]!, { amount: "8.00" })]) {
        expect(await deliver(f), f).not.toBe(200)
      }
      expect(seen.map((c) => c.amount)).toEqual(["4.00"])
      expect(w.sim.order(order.orderid)!.captured).toBe("4.00")
    } finally {
      await w.sim.close()
    }
  })
})

describe("attack: two clients sharing one claim store (each its own in-memory ledger)", () => {
  // Claims split from the intents they are proven by could hand one capture over twice (the genuine
  // callback on B, a variant on A proven by the serial number A's call got): such a configuration
  // is refused when the second handler is built (docs/decisions.md#21-one-call-at-a-time-per-order-across-a-fleet).
  it("a claim store already serving another client's intents is refused at start, naming the field and the rule", async () => {
    const w = world()
    try {
      const a = w.client()
      const b = w.client()
      const claims = memoryCallbackStore()
      recorder(b, claims)
      expect(() => recorder(a, claims)).toThrow(/claims: must live in the same PayStore as the client's intents/)
      // The same claim store again on the client it serves is fine.
      expect(() => recorder(b, claims)).not.toThrow()
    } finally {
      await w.sim.close()
    }
  })

  it("two clients over one shared store: a capture's callback and its replayed variant reach the handlers once", async () => {
    const w = world()
    const store = await openMemoryStore()
    try {
      const a = w.client({ store })
      const b = w.client({ store })
      const order = await paid(a, w.settle, "preauth")
      await a.capture({ ...order, amount: "4.00", currency: "USD" })
      await w.settle()
      const [genuine] = w.callbacksOf(order.orderid, "capture")
      const onA = recorder(a, null)
      const onB = recorder(b, null)
      expect(await onB.deliver(genuine!)).toBe(200)
      await onA.deliver(forge(genuine!, { descriptor: "REPLAY" }))
      // One 4.00 capture on the order: the merchant's code sees it once across the fleet.
      expect([...onA.seen, ...onB.seen].map((c) => c.amount)).toEqual(["4.00"])
    } finally {
      await store.close()
      await w.sim.close()
    }
  })
})

describe("attack: chargebacks replayed", () => {
  it("a chargeback callback and its variants with other unsigned bytes reach onCallback once (were 4 runs for one 10.00 chargeback: claimed by exact text, confirmed only as within the order amount)", async () => {
    const w = world()
    try {
      const pay = w.client()
      const order = await paid(pay, w.settle, "sale")
      await w.sim.fetch(new Request(`${BASE_URL}/__sim/orders/${order.orderid}/settle`, { method: "POST" }))
      const res = await w.sim.fetch(new Request(`${BASE_URL}/__sim/orders/${order.orderid}/chargeback`, { method: "POST", body: JSON.stringify({ amount: "10.00" }), headers: { "Content-Type": "application/json" } }))
      expect(res.status).toBeLessThan(300)
      await w.settle()
      const genuine = w.callbacksOf(order.orderid, "chargeback")
      expect(genuine).toHaveLength(1)
      const { seen, deliver } = recorder(pay)
      await deliver(genuine[0]!)
      for (const f of [forge(genuine[0]!, { descriptor: "R1" }), forge(genuine[0]!, { "approval-code": undefined }), forge(genuine[0]!, { merchantdata: "again" })]) await deliver(f)
      expect(seen.map((c) => [c.type, c.amount])).toEqual([["chargeback", "10.00"]])
    } finally {
      await w.sim.close()
    }
  })
})
