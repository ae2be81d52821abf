/**
 * Attack suite: the calls on an existing order that move no money but change its
 * stage (card references, 3-D Secure uploads), answered with an undecodable 200 or a reset after the
 * gateway processed them: reconciled from the order's snapshot, never a DecodeError or a bare
 * TransportError, and the order's stage moved once.
 */
import { beforeEach, describe, expect, it } from "vitest"
import type { PromisePayClient } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { afterProcessing, approvedOrder, client, letLand, newSim } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const undecodable = () => new Response("<html>oops</html>", { status: 200 })

describe("attack: card references and 3-D Secure uploads whose reply is lost", () => {
  for (const [label, reply] of [["undecodable 200", undecodable], ["reset after processing", "reset"]] as const) {
    it(`createCardRef and createCardRefV4 (${label}): reconciled to the order's card-ref-id`, async () => {
      const sim = newSim()
      try {
        for (const [method, segment] of [["createCardRef", "create-card-ref"], ["createCardRefV4", "create-card-ref"]] as const) {
          const o = await approvedOrder(client(sim), "sale")
          const pay = client(sim, { fetch: afterProcessing(sim, segment, reply).fetch })
          const r = await (pay[method] as (i: unknown) => Promise<Record<string, unknown>>)({ client_orderid: o.client_orderid, orderid: o.orderid }).then((v) => v, (e: { _tag: string; message: string }): Record<string, unknown> => ({ type: `${e._tag}: ${e.message}` }))
          expect(r["type"], method).toBe("reconciled")
          const ref = (r["statusReply"] as Record<string, unknown>)["card-ref-id"]
          expect(typeof ref, method).toBe("string")
          expect(sim.order(o.orderid)!.cardRefId).toBe(ref)
        }
      } finally {
        await sim.close()
      }
    })

    it(`3-D Secure uploads (${label}): method-url and CRes reconciled from the order's stage, the order approved once`, async () => {
      const sim = newSim()
      try {
        const clean: PromisePayClient = client(sim)
        const a = saleInput({ credit_card_number: "4000000000003220" })
        const ack = await clean.sale(a)
        const orderid = ack["paynet-order-id"]!
        const waiting = await clean.awaitFinal({ client_orderid: a.client_orderid })
        expect(waiting._tag).toBe("ActionRequired")
        const m = await client(sim, { fetch: afterProcessing(sim, "upload-method-url-result", reply).fetch })
          .uploadMethodUrlResult({ "client-order-id": a.client_orderid, orderid, threeDSCompInd: "Y" })
          .then((v) => String((v as { type: unknown }).type), (e: { _tag: string }) => e._tag)
        const c = await client(sim, { fetch: afterProcessing(sim, "upload-cres-result", reply).fetch })
          .uploadCresResult({ "client-order-id": a.client_orderid, orderid, cRes: "Y" })
          .then((v) => String((v as { type: unknown }).type), (e: { _tag: string }) => e._tag)
        await letLand(sim)
        // The method-URL step does not show in status: its lost reply cannot be proven either way,
        // and a resend refused as "threeds-state" means it most likely landed. Never a bare refusal.
        expect(m).toMatch(/^(reconciled|OutcomeUnknown)$/)
        expect(c).toBe("reconciled")
        expect(await clean.awaitFinal({ client_orderid: a.client_orderid }, { stopOnRedirect: false })).toMatchObject({ _tag: "Final", status: "approved" })
        expect(sim.orders().filter((x) => x.client_orderid === a.client_orderid)).toHaveLength(1)
      } finally {
        await sim.close()
      }
    })
  }
})
