/**
 * Attack suite, callbacks: a customer holding only the signed fields of their
 * own order (status, orderid, client_orderid, control from the 3DS return page) forging the unsigned
 * ones, against real orders in the simulator whose last transaction is a follow-up; stale and
 * concurrent deliveries; claim stores that fail.
 */
import { callbackControl } from "@paykit/signing"
import { testMerchant } from "@paykit/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import type { CallbackClaimStore, ConfirmedCallback, PromisePayClient } from "../../src/index"
import { approvedOrder, client, letLand, newSim, sleep } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

/** What the customer holds: the signed fields of their own order, and the freedom to add any others. */
function forged(o: { client_orderid: string; orderid: string }, unsigned: Record<string, string>, status = "approved"): Request {
  const p = new URLSearchParams({ status, orderid: o.orderid, merchant_order: o.client_orderid, client_orderid: o.client_orderid, ...unsigned })
  p.set("control", callbackControl({ status, orderid: o.orderid, client_orderid: o.client_orderid }, testMerchant.controlKey))
  return new Request(`https://shop.example.com/paykit/callback?${p.toString()}`)
}

const OPENING_TYPES = ["sale", "preauth", "rebill", "payout", "transfer", "account-verification"]

async function handled(pay: PromisePayClient, requests: Array<Request>) {
  const seen: Array<ConfirmedCallback> = []
  const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(cb) })
  const statuses: Array<number> = []
  for (const r of requests) statuses.push((await handler(r)).status)
  return { seen, statuses }
}

describe("attack: forged opening-transaction types on an order that has moved on", () => {
  it("a captured preauth: the genuine preauth callback runs once; sale/rebill/payout/transfer variants never reach onCallback", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "preauth")
      await pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "10.00", currency: "USD" })
      await letLand(sim)
      const genuine = forged(o, { type: "preauth", amount: "10.00", currency: "USD" })
      const { seen, statuses } = await handled(pay, [genuine, ...OPENING_TYPES.map((type) => forged(o, { type, amount: "10.00", "approval-code": `X-${type}` }))])
      expect(seen.map((cb) => cb.type)).toEqual(["preauth"])
      expect(statuses[0]).toBe(200)
    } finally {
      await sim.close()
    }
  })

  it("a captured preauth whose genuine callback never arrived: a forged 'sale' is not handed over as a sale", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "preauth")
      await pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "10.00", currency: "USD" })
      await letLand(sim)
      const { seen } = await handled(pay, ["sale", "rebill", "payout", "transfer", "account-verification"].map((type) => forged(o, { type, amount: "10.00" })))
      expect(seen.map((cb) => cb.type)).toEqual([])
    } finally {
      await sim.close()
    }
  })

  it("a fully refunded sale: rebill/payout/transfer/preauth variants of the customer's return page never reach onCallback", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "sale")
      await pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "10.00", currency: "USD" })
      await letLand(sim)
      const { seen } = await handled(pay, [forged(o, { type: "sale", amount: "10.00" }), ...["preauth", "rebill", "payout", "transfer", "account-verification"].map((type) => forged(o, { type, amount: "10.00" }))])
      // The sale itself is genuine (stale, and handed over with the order now refunded); nothing else.
      expect(seen.map((cb) => `${cb.type}:${cb.orderOutcome}`)).toEqual(["sale:refunded"])
    } finally {
      await sim.close()
    }
  })

  it("a voided sale: a forged second void or a forged chargeback never reaches onCallback twice", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "sale")
      await pay.void({ client_orderid: o.client_orderid, orderid: o.orderid })
      await letLand(sim)
      const { seen } = await handled(pay, [
        forged(o, { type: "void", amount: "10.00" }),
        forged(o, { type: "void", amount: "10.00", "approval-code": "other" }),
        forged(o, { type: "void", amount: "0.01" }),
        forged(o, { type: "chargeback", amount: "10.00" })
      ])
      expect(seen.map((cb) => cb.type)).toEqual(["void"])
    } finally {
      await sim.close()
    }
  })
})

describe("attack: deliveries at once, stale ones, failing claim stores", () => {
  it("five simultaneous variants of one sale callback (unsigned fields differ) run onCallback once", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "sale")
      let runs = 0
      const handler = pay.callbackHandler({ onCallback: async () => { runs++; await sleep(20) } })
      const rs = await Promise.all([0, 1, 2, 3, 4].map((i) => handler(forged(o, { type: "sale", amount: "10.00", descriptor: `v${i}` }))))
      expect(runs).toBe(1)
      expect(rs.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1)
      expect(rs.every((r) => r.status === 200 || r.status === 500)).toBe(true)
    } finally {
      await sim.close()
    }
  })

  it("a stale 'sale approved' after a partial refund is handed over beside the current status (partially-refunded)", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "sale")
      await pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "4.00", currency: "USD" })
      await letLand(sim)
      const seen: Array<[ConfirmedCallback, unknown]> = []
      const handler = pay.callbackHandler({ onCallback: (cb, current) => void seen.push([cb, current]) })
      expect((await handler(forged(o, { type: "sale", amount: "10.00" }))).status).toBe(200)
      expect(seen).toHaveLength(1)
      expect(seen[0]![0].orderOutcome).toBe("partially-refunded")
      expect(seen[0]![1]).toMatchObject({ "returned-amount": "4.00" })
    } finally {
      await sim.close()
    }
  })

  for (const method of ["claim", "complete", "release"] as const) {
    for (const how of ["rejects", "throws"] as const) {
      it(`a claim store whose ${method} ${how}: the handler answers (500 or 200), never rejects, and onCallback runs at most once per success`, async () => {
        const sim = newSim()
        try {
          const pay = client(sim)
          const o = await approvedOrder(pay, "sale")
          const inner = new Map<string, "running" | "done">()
          const ok: CallbackClaimStore = {
            claim: (q) => (inner.get(q) === "done" ? "done" : inner.has(q) ? "running-elsewhere" : (inner.set(q, "running"), "claimed")),
            complete: (q) => void inner.set(q, "done"),
            release: (q) => void inner.delete(q)
          }
          const broken: CallbackClaimStore = {
            ...ok,
            [method]: () => {
              if (how === "throws") throw new Error("db down")
              return Promise.reject(new Error("db down"))
            }
          }
          let runs = 0
          let fail = method === "release"
          const handler = pay.callbackHandler({
            claims: broken,
            onCallback: () => {
              runs++
              // With a broken release, make the user code fail once so release is reached.
              if (fail) {
                fail = false
                throw new Error("merchant db down")
              }
            }
          })
          const res = await handler(forged(o, { type: "sale", amount: "10.00" }))
          expect([200, 500]).toContain(res.status)
          if (method === "claim") expect(runs).toBe(0)
          else expect(runs).toBe(1)
        } finally {
          await sim.close()
        }
      })
    }
  }
})

describe("attack: a claim store answering something other than a ClaimResult", () => {
  for (const odd of [undefined, true, "yes", null]) {
    it(`claim answering ${JSON.stringify(odd)}: 500, onCallback not run`, async () => {
      const sim = newSim()
      try {
        const pay = client(sim)
        const o = await approvedOrder(pay, "sale")
        let runs = 0
        const store = { claim: () => odd, complete: () => undefined, release: () => undefined } as unknown as CallbackClaimStore
        const handler = pay.callbackHandler({ claims: store, onCallback: () => void runs++ })
        expect((await handler(forged(o, { type: "sale", amount: "10.00" }))).status).toBe(500)
        expect(runs).toBe(0)
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: the issue's own replay, against a simulator order", () => {
  it("a 10.00 sale's callback replayed with amount=1000.00, type=rebill, currency=EUR or 3 return-page variants: onCallback runs once, for the genuine one", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      const o = await approvedOrder(pay, "sale")
      const { seen, statuses } = await handled(pay, [
        forged(o, { type: "sale", amount: "1000.00" }),
        forged(o, { type: "rebill", amount: "10.00" }),
        forged(o, { type: "sale", amount: "10.00", currency: "EUR" }),
        forged(o, { type: "sale", amount: "10.00", "approval-code": "A1", "processor-rrn": "1" }),
        forged(o, {}),
        forged(o, { type: "sale", amount: "10.00", descriptor: "return page" }),
        forged(o, { type: "sale", amount: "10.00", error_message: "null" })
      ])
      expect(statuses.slice(0, 3)).toEqual([403, 403, 403])
      expect(seen.map((cb) => `${cb.type}:${cb.amount}:${cb.currency}:${cb.confirmedByStatus}`)).toEqual(["sale:10.00:USD:true"])
    } finally {
      await sim.close()
    }
  })
})
