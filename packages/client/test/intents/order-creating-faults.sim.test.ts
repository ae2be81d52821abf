/**
 * Attack suite, order-creating calls: reconciliation finding a different order
 * under the same client_orderid, an undecodable 200 (and 408/429/5xx after processing) on every
 * money-moving operation, per-call endpoint on the reconciling status, and retries running out
 * after an earlier attempt's outcome was unknown.
 */
import { beforeEach, describe, expect, it } from "vitest"
import type { PromisePayClient } from "../../src/index"
import { coid, saleInput } from "../support/fixtures"
import { afterProcessing, approvedOrder, client, letLand, newSim, opOf, settled, sleep } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const undecodable = () => new Response("<html>oops</html>", { status: 200 })
const formFields = () => {
  const { credit_card_number: _a, cvv2: _b, card_printed_name: _c, expire_month: _d, expire_year: _e, ...rest } = saleInput() as Record<string, string>
  return rest
}
const payoutFields = () => ({ client_orderid: coid("po"), amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
const recurringFields = () => ({ "client-orderid": coid("rp"), order_desc: "monthly", amount: "9.99", currency: "USD", "credit-card-number": "4111111111111111", "card-printed-name": "JOHN DOE", "expire-month": "12", "expire-year": "2030", cvv2: "123", country: "US", city: "Springfield", "zip-code": "12345", address1: "1 Main St", "customer-ip": "127.0.0.1", period: "month" as const, interval: "1" })

type Call = (pay: PromisePayClient, clean: PromisePayClient) => Promise<{ segment: string; call: () => Promise<unknown>; client_orderid: string }>

/** Every order-creating money call: the path segment, and the call with a fresh client_orderid. */
const CREATING: Record<string, Call> = {
  sale: async (pay) => { const i = saleInput(); return { segment: "sale", client_orderid: i.client_orderid, call: () => pay.sale(i) } },
  preauth: async (pay) => { const i = saleInput(); return { segment: "preauth", client_orderid: i.client_orderid, call: () => pay.preauth(i) } },
  saleForm: async (pay) => { const i = formFields(); return { segment: "sale-form", client_orderid: i["client_orderid"]!, call: () => pay.saleForm(i as never) } },
  preauthForm: async (pay) => { const i = formFields(); return { segment: "preauth-form", client_orderid: i["client_orderid"]!, call: () => pay.preauthForm(i as never) } },
  paymentForm: async (pay) => { const i = formFields(); return { segment: "payment-form", client_orderid: i["client_orderid"]!, call: () => pay.paymentForm(i as never) } },
  payoutForm: async (pay) => { const i = { client_orderid: coid("pf"), amount: "5.00", currency: "USD", redirect_url: "https://shop.example.com/r" }; return { segment: "payout-form", client_orderid: i.client_orderid, call: () => pay.payoutForm(i) } },
  accountVerification: async (pay) => {
    const { amount: _a, currency: _c, redirect_url: _r, ...av } = saleInput() as Record<string, string>
    return { segment: "account-verification", client_orderid: av["client_orderid"]!, call: () => pay.accountVerification(av as never) }
  },
  payout: async (pay) => { const i = payoutFields(); return { segment: "payout", client_orderid: i.client_orderid, call: () => pay.payout(i) } },
  payoutCheck: async (pay) => { const i = payoutFields(); return { segment: "payout-check", client_orderid: i.client_orderid, call: () => pay.payoutCheck(i) } },
  transfer: async (pay) => {
    const i = { client_orderid: coid("tr"), amount: "1.00", currency: "USD", order_desc: "t", ipaddress: "127.0.0.1", redirect_url: "https://shop.example.com/r", credit_card_number: "4111111111111111", cvv2: "123", expire_month: "12", expire_year: "2030", card_printed_name: "JOHN DOE", "destination-card-no": "5555555555554444" }
    return { segment: "transfer", client_orderid: i.client_orderid, call: () => pay.transfer(i) }
  },
  makeRebill: async (pay, clean) => {
    const o = await approvedOrder(clean, "sale")
    const ref = await clean.createCardRef({ client_orderid: o.client_orderid, orderid: o.orderid })
    const cardrefid = ref.type === "reconciled" ? ref.statusReply["card-ref-id"]! : ref["card-ref-id"]
    const i = { client_orderid: coid("rb"), cardrefid, amount: "3.00", currency: "USD", order_desc: "rebill", ipaddress: "127.0.0.1" }
    return { segment: "make-rebill", client_orderid: i.client_orderid, call: () => pay.makeRebill(i) }
  },
  transferByRef: async (pay, clean) => {
    const o = await approvedOrder(clean, "sale")
    const ref = await clean.createCardRef({ client_orderid: o.client_orderid, orderid: o.orderid })
    const cardrefid = ref.type === "reconciled" ? ref.statusReply["card-ref-id"]! : ref["card-ref-id"]
    const i = { "client-order-id": coid("tbr"), amount: "2.00", currency: "USD", order_desc: "t", "source-card-ref-id": cardrefid, "destination-card-no": "5555555555554444" }
    return { segment: "transfer-by-ref", client_orderid: i["client-order-id"], call: () => pay.transferByRef(i) }
  },
  createRecurringPayment: async (pay) => { const i = recurringFields(); return { segment: "create-recurring-payment", client_orderid: i["client-orderid"], call: () => pay.createRecurringPayment(i) } },
  processRecurringPayment: async (pay, clean) => {
    const rp = await clean.createRecurringPayment(recurringFields())
    const id = rp.type === "reconciled" ? String(rp.statusReply["recurring-payment-id"]) : rp["recurring-payment-id"]
    const i = { "client-orderid": coid("rpc"), "recurring-payment-id": id }
    return { segment: "process-recurring-payment", client_orderid: i["client-orderid"], call: () => pay.processRecurringPayment(i) }
  }
}

const REPLIES: Record<string, () => Response> = {
  "undecodable 200": undecodable,
  "200 JSON of the wrong shape": () => Response.json({ type: "async-response", status: "banana" }, { status: 200 }),
  "408": () => new Response("", { status: 408 }),
  "429": () => new Response("", { status: 429 }),
  "502": () => new Response("bad gateway", { status: 502 }),
  "503": () => new Response("", { status: 503 }),
  "504": () => new Response("", { status: 504 })
}

describe("attack: every order-creating call answered badly after it was processed", () => {
  for (const [method, make] of Object.entries(CREATING)) {
    it(`${method}: each bad reply after processing is reconciled to the one order, never a bare error, never a second order`, async () => {
      const sim = newSim()
      try {
        const clean = client(sim)
        for (const [label, reply] of Object.entries(REPLIES)) {
          let armed: string | undefined
          const fetch = async (req: Request): Promise<Response> => {
            if (armed === undefined || opOf(req) !== armed) return sim.fetch(req)
            armed = undefined
            await sim.fetch(req)
            return reply()
          }
          const pay = client(sim, { fetch })
          const c = await make(pay, clean)
          armed = c.segment
          const r = await settled(c.call())
          await letLand(sim)
          const orders = sim.orders().filter((o) => o.client_orderid === c.client_orderid)
          expect(orders, `${method} × ${label}`).toHaveLength(1)
          expect(r.ok ? r.value["type"] : `${r.error._tag}: ${r.error.message}`, `${method} × ${label}`).toBe("reconciled")
          if (r.ok) expect(typeof r.value["idempotencyKey"], `${method} × ${label}`).toBe("string")
        }
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: reconciliation finds another order under the same client_orderid", () => {
  const cases: Array<[string, (pay: PromisePayClient, sim: ReturnType<typeof newSim>) => Promise<{ client_orderid: string }>, (pay: PromisePayClient, coid: string) => Promise<unknown>, string]> = [
    ["a 99.00 sale finds an older 10.00 sale", async (pay) => approvedOrder(pay, "sale"), (pay, c) => pay.sale(saleInput({ client_orderid: c, amount: "99.00" })), "amount"],
    ["a EUR sale finds an older USD sale", async (pay) => approvedOrder(pay, "sale"), (pay, c) => pay.sale(saleInput({ client_orderid: c, currency: "EUR" })), "currency"],
    ["a sale finds an older preauth", async (pay) => approvedOrder(pay, "preauth"), (pay, c) => pay.sale(saleInput({ client_orderid: c })), "transaction-type"],
    ["a sale finds an older preauth that was since captured (last transaction: capture)", async (pay, sim) => {
      const o = await approvedOrder(pay, "preauth")
      await pay.capture({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "10.00", currency: "USD" })
      await letLand(sim)
      return o
    }, (pay, c) => pay.sale(saleInput({ client_orderid: c })), "transaction-type"],
    ["a preauth finds an older sale that was since refunded (last transaction: return)", async (pay, sim) => {
      const o = await approvedOrder(pay, "sale")
      await pay.return({ client_orderid: o.client_orderid, orderid: o.orderid, amount: "10.00", currency: "USD" })
      await letLand(sim)
      return o
    }, (pay, c) => pay.preauth(saleInput({ client_orderid: c })), "transaction-type"],
    ["a sale finds an older sale that was since voided (last transaction: void) — same amount, same type: the same order", async (pay, sim) => {
      const o = await approvedOrder(pay, "sale")
      await pay.void({ client_orderid: o.client_orderid, orderid: o.orderid })
      await letLand(sim)
      return o
    }, (pay, c) => pay.sale(saleInput({ client_orderid: c })), "none"]
  ]
  for (const [name, setupOrder, call, field] of cases) {
    it(`${name}: ${field === "none" ? "reconciled to it" : `ReconcileConflict on ${field}`}`, async () => {
      const sim = newSim()
      try {
        const o = await setupOrder(client(sim), sim)
        const before = sim.orders().length
        sim.faults.add({ operation: "SALE", kind: "http-500", count: 1 })
        sim.faults.add({ operation: "PREAUTH", kind: "http-500", count: 1 })
        const r = await settled(call(client(sim), o.client_orderid))
        sim.faults.clear()
        await letLand(sim)
        if (field === "none") expect(r.ok ? r.value["type"] : r.error._tag).toBe("reconciled")
        else {
          expect(r.ok ? `resolved ${String(r.value["type"])}` : r.error._tag).toBe("ReconcileConflict")
          if (!r.ok) expect(r.error["field"]).toBe(field)
        }
        expect(sim.orders().length).toBe(before)
      } finally {
        await sim.close()
      }
    })
  }
})

describe("attack: per-call options reach the reconciling status", () => {
  it("endpoint: group (both path forms) — the snapshot and every reconciling status go to the group", async () => {
    for (const form of ["endpoint-id", "group-path"] as const) {
      const sim = newSim()
      try {
        const urls: Array<string> = []
        const wrapped = afterProcessing(sim, "capture", "reset")
        const pay = client(sim, { fetch: (req) => { urls.push(new URL(req.url).pathname); return wrapped.fetch(req) } })
        const clean = client(sim)
        const i = saleInput()
        const ack = await clean.preauth(i, { endpoint: "group", groupPathForm: form })
        await clean.awaitFinal({ client_orderid: i.client_orderid, orderid: ack["paynet-order-id"]! })
        const r = await settled(pay.capture({ client_orderid: i.client_orderid, orderid: ack["paynet-order-id"]!, amount: "1.00", currency: "USD" }, { endpoint: "group", groupPathForm: form }))
        expect(r.ok ? r.value["type"] : r.error._tag).toBe("reconciled")
        const statuses = urls.filter((u) => u.includes("/status/"))
        expect(statuses.length).toBeGreaterThanOrEqual(2)
        for (const u of statuses) expect(u, form).toBe(form === "group-path" ? "/api/v2/status/group/2001" : "/api/v2/status/2001")
      } finally {
        await sim.close()
      }
    }
  })
})

describe("attack: retries run out after an unknown outcome", () => {
  it("a sale held past its timeout, every later attempt refused before connecting: never 'not applied' while the first may still land", async () => {
    const sim = newSim()
    try {
      let n = 0
      const pay = client(sim, {
        timeoutMs: 40,
        reconcile: { settleMs: 80, pollIntervalMs: 10 },
        fetch: async (req) => {
          if (opOf(req) !== "sale") return sim.fetch(req)
          if (n++ === 0) {
            // The gateway holds the first request (it ignores the client's abort) and processes it late.
            await sleep(250)
            return sim.fetch(req)
          }
          throw new TypeError("fetch failed", { cause: { code: "ECONNREFUSED" } })
        }
      })
      const i = saleInput()
      const r = await settled(pay.sale(i))
      await letLand(sim, 300)
      const landed = sim.orders().filter((o) => o.client_orderid === i.client_orderid).length
      expect(landed).toBe(1)
      expect(r.ok ? r.value["type"] : `${r.error._tag}(${String(r.error["mayHaveApplied"])})`).not.toBe("OutcomeUnknown(false)")
      if (!r.ok) expect(["OutcomeUnknown", "ReconcileConflict"]).toContain(r.error._tag)
    } finally {
      await sim.close()
    }
  })

  it("every sale attempt answered 500 without processing: OutcomeUnknown(mayHaveApplied false) naming the key; the same key then sends once", async () => {
    const sim = newSim()
    try {
      const pay = client(sim)
      sim.faults.add({ operation: "SALE", kind: "http-500", count: 3 })
      const i = saleInput()
      const r = await settled(pay.sale(i))
      expect(r.ok ? "ok" : `${r.error._tag}(${String(r.error["mayHaveApplied"])})`).toBe("OutcomeUnknown(false)")
      expect(sim.orders().filter((o) => o.client_orderid === i.client_orderid)).toHaveLength(0)
      const again = await pay.sale(i, { idempotencyKey: String(!r.ok && r.error["idempotencyKey"]) })
      expect(again["type"]).toBe("async-response")
      await letLand(sim)
      expect(sim.orders().filter((o) => o.client_orderid === i.client_orderid)).toHaveLength(1)
    } finally {
      await sim.close()
    }
  })
})
