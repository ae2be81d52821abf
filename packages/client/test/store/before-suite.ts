/**
 * Part of the adapter suite (run by `storeSuite` against memory, PGlite and PostgreSQL): the order
 * as it was before a call on an existing order (migration 2), and `recover()` proving such a call's
 * outcome from it after the instance that sent it died. `status` here is a scripted gateway reply:
 * what is under test is the store and the judgement, not the transport.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { GatewayValidationError } from "../../src/errors"
import type { StatusReply } from "../../src/operations/table"
import { recover, type RecoverStatus } from "../../src/intents/recover"
import type { IntentInput } from "../../src/store/types"
import type { Harness, ManualClock } from "./support"

const LEASE = 30_000
const SETTLE = 10_000

const capture = (key: string, extra: Partial<IntentInput> = {}): IntentInput => ({
  idempotencyKey: key, operation: "CAPTURE", client_orderid: `order-${key}`, orderid: "7001", amount: "4.00", currency: "USD", endpoint: "1001",
  beforeRequired: true, ...extra
})

// The order before: a 10.00 preauth, nothing captured. Card fields ride along, as in a real reply.
const beforeReply = {
  type: "status-response", status: "approved", "transaction-type": "preauth", "serial-number": "s-1", "paynet-order-id": "7001",
  "merchant-order-id": "order-b1", amount: "10.00", currency: "USD", "captured-amount": "0.00", "returned-amount": "0.00",
  bin: "411111", "last-four-digits": "1111", "cardholder-name": "JANE DOE", "card-exp-year": "2030", html: "<form>...</form>"
}

export function beforeSnapshotTests(h: () => Harness, run: <A, E>(effect: Effect.Effect<A, E>) => Promise<A>, clock: ManualClock, t0: number): void {
  const s = () => h().store()
  const scripted = (reply: Record<string, unknown> | "not-found" | "down") => {
    const asked: Array<{ client_orderid: string; orderid?: string }> = []
    const status: RecoverStatus = (query) => {
      asked.push(query)
      if (reply === "not-found") return Effect.fail(new GatewayValidationError({ operation: "status", errorCode: "order-not-found", errorMessage: "no such order", category: "lifecycle" }))
      if (reply === "down") return Effect.fail(new GatewayValidationError({ operation: "status", errorCode: "x", errorMessage: "down", category: "unknown" }))
      return Effect.succeed({ ...beforeReply, ...reply } as unknown as StatusReply)
    }
    return { status, asked }
  }

  describe("the order before a call on an existing order (migration 2)", () => {
    it("keeps only the gateway's figures of the snapshot, for the holder of the intent only", async () => {
      const r = await run(s().recordIntent(capture("b1"), { leaseMs: LEASE, owner: "a" }))
      expect(r.intent.beforeRequired).toBe(true)
      expect(r.intent.before).toBeUndefined()
      expect(await run(s().recordBefore("b1", beforeReply, { attempt: 1, owner: "a" }))).toBe(true)
      const kept = await run(h().peer().findByKey("b1"))
      expect(kept?.before).toEqual({
        status: "approved", "transaction-type": "preauth", "serial-number": "s-1", "paynet-order-id": "7001", "merchant-order-id": "order-b1",
        amount: "10.00", currency: "USD", "captured-amount": "0.00", "returned-amount": "0.00"
      })
      const dump = await h().dump()
      expect(dump).not.toMatch(/JANE DOE|411111|last-four|<form>/)
      // Another owner, or the holder under a stale attempt, cannot write it.
      expect(await run(s().recordBefore("b1", beforeReply, { attempt: 1, owner: "b" }))).toBe(false)
      expect(await run(s().recordBefore("b1", beforeReply, { attempt: 2, owner: "a" }))).toBe(false)
    })

    it("fences a holder that lost its intent: after a take-over only the new holder writes, and nobody after the outcome", async () => {
      await run(s().recordIntent(capture("b2"), { leaseMs: LEASE, owner: "a" }))
      clock.now += LEASE
      const taken = await run(h().peer().recordIntent(capture("b2"), { leaseMs: LEASE, owner: "b" }))
      expect(taken._tag).toBe("TakenOver")
      expect(taken.intent).toMatchObject({ beforeRequired: true, attempts: 2 })
      expect(await run(s().recordBefore("b2", beforeReply, { attempt: 1, owner: "a" }))).toBe(false)
      expect(await run(h().peer().recordBefore("b2", beforeReply, { attempt: 2, owner: "b" }))).toBe(true)
      await run(s().recordOutcome("b2", { _tag: "Returned", status: "approved" }))
      expect(await run(h().peer().recordBefore("b2", beforeReply, { attempt: 2, owner: "b" }))).toBe(false)
    })

    it("refuses a snapshot without a status or with a non-text figure, by field", async () => {
      await run(s().recordIntent(capture("b3"), { leaseMs: LEASE, owner: "a" }))
      const noStatus = await run(Effect.flip(s().recordBefore("b3", { amount: "1.00" }, { attempt: 1, owner: "a" })))
      expect(noStatus).toMatchObject({ _tag: "StoreInputError", field: "before.status" })
      const bad = await run(Effect.flip(s().recordBefore("b3", { status: "approved", amount: { x: 1 } }, { attempt: 1, owner: "a" })))
      expect(bad).toMatchObject({ _tag: "StoreInputError", field: "before.amount" })
      expect((await run(s().findByKey("b3")))?.before).toBeUndefined()
    })
  })

  describe("a new send under a key whose call provably moved nothing (reopenIntent)", () => {
    it("re-opens a failed intent once, for one caller, with a fresh snapshot slot and creation time", async () => {
      await run(s().recordIntent(capture("o1"), { leaseMs: LEASE, owner: "a" }))
      await run(s().recordBefore("o1", beforeReply, { attempt: 1, owner: "a" }))
      await run(s().recordOutcome("o1", { _tag: "Failed", errorTag: "NotApplied" }))
      clock.now += 5_000
      const opened = await Promise.all(Array.from({ length: 8 }, (_, i) => run((i % 2 === 0 ? s() : h().peer()).reopenIntent("o1", { leaseMs: LEASE, owner: `r${i}` }))))
      const winners = opened.filter((i) => i !== undefined)
      expect(winners).toHaveLength(1)
      expect(winners[0]).toMatchObject({ attempts: 2, createdAt: clock.now, leaseUntil: clock.now + LEASE, beforeRequired: true })
      expect(winners[0]?.outcome).toBeUndefined()
      expect(winners[0]?.before).toBeUndefined()
      // The re-opened intent is an unfinished one like any other: its holder records its snapshot and outcome.
      expect(await run(s().recordBefore("o1", beforeReply, { attempt: 2, owner: winners[0]!.owner }))).toBe(true)
      expect((await run(s().recordOutcome("o1", { _tag: "Returned", status: "approved" })))._tag).toBe("Recorded")
    })

    it("never re-opens a succeeded or an unfinished intent", async () => {
      await run(s().recordIntent(capture("o2"), { leaseMs: LEASE, owner: "a" }))
      expect(await run(s().reopenIntent("o2", { leaseMs: LEASE, owner: "b" }))).toBeUndefined()
      await run(s().recordOutcome("o2", { _tag: "Returned", status: "approved" }))
      expect(await run(s().reopenIntent("o2", { leaseMs: LEASE, owner: "b" }))).toBeUndefined()
      expect(await run(s().reopenIntent("nobody", { leaseMs: LEASE, owner: "b" }))).toBeUndefined()
      expect((await run(s().findByKey("o2")))?.outcome).toMatchObject({ status: "approved" })
    })
  })

  describe("recover() on calls on an existing order", () => {
    const dead = async (key: string, extra: Partial<IntentInput> = {}, before: Record<string, unknown> | null = beforeReply) => {
      await run(s().recordIntent(capture(key, extra), { leaseMs: LEASE, owner: "dead" }))
      if (before !== null) expect(await run(s().recordBefore(key, before, { attempt: 1, owner: "dead" }))).toBe(true)
    }

    it("records a capture as applied when the order shows the captured amount the snapshot did not", async () => {
      await dead("r1")
      clock.now = t0 + LEASE
      const g = scripted({ "transaction-type": "capture", "captured-amount": "4.00", "serial-number": "s-2" })
      const report = await run(recover(h().peer(), g.status, { olderThanMs: 0, settleMs: SETTLE }))
      expect(report).toEqual({ claimed: 1, applied: 1, notApplied: 0, unresolved: 0, unknown: 0 })
      expect(g.asked).toEqual([{ client_orderid: "order-r1", orderid: "7001" }])
      const kept = await run(s().findByKey("r1"))
      expect(kept?.outcome).toMatchObject({ _tag: "Returned", status: "approved", orderid: "7001" })
      expect((kept?.outcome?.data as Record<string, unknown>)["statusBefore"]).toMatchObject({ "captured-amount": "0.00" })
    })

    it("records not applied only once the order stayed unchanged past the processing window after the last send", async () => {
      // The dead holder declared no deadline: it may have sent until its lease ran out (t0 + LEASE).
      await dead("r2")
      const window = 2 * LEASE
      clock.now = t0 + LEASE
      const g = scripted({})
      expect(await run(recover(s(), g.status, { olderThanMs: 0, settleMs: window, leaseMs: 1 }))).toMatchObject({ claimed: 1, unresolved: 1 })
      expect((await run(s().findByKey("r2")))?.outcome).toBeUndefined()
      // A window counted from the intent's creation has passed, not one counted from the last send.
      clock.now = t0 + window
      expect(await run(recover(s(), g.status, { olderThanMs: 0, settleMs: window, leaseMs: 1 }))).toMatchObject({ claimed: 1, unresolved: 1 })
      clock.now = t0 + LEASE + window
      expect(await run(recover(s(), g.status, { olderThanMs: 0, settleMs: window }))).toMatchObject({ claimed: 1, notApplied: 1 })
      expect((await run(s().findByKey("r2")))?.outcome).toMatchObject({ _tag: "Failed", errorTag: "NotApplied" })
    })

    it("leaves a capture still processing, and a conflicting amount is recorded as a conflict", async () => {
      await dead("r3")
      await dead("r4")
      clock.now = t0 + LEASE
      const pending = scripted({ "transaction-type": "capture", status: "processing", "serial-number": "s-2" })
      const one = await run(recover(s(), pending.status, { olderThanMs: 0, settleMs: SETTLE, leaseMs: 1, limit: 1 }))
      expect(one).toMatchObject({ claimed: 1, unresolved: 1 })
      const wrong = scripted({ "transaction-type": "capture", "captured-amount": "6.00" })
      clock.now += 10
      const two = await run(recover(s(), wrong.status, { olderThanMs: 0, settleMs: SETTLE }))
      expect(two).toMatchObject({ claimed: 2, applied: 0, notApplied: 0, unresolved: 0 })
      expect((await run(s().findByKey("r3")))?.outcome).toMatchObject({ _tag: "Failed", errorTag: "ReconcileConflict" })
    })

    it("settles an intent that promised a snapshot and left none as never sent, without asking status", async () => {
      await dead("r5", {}, null)
      clock.now = t0 + LEASE
      const g = scripted("down")
      expect(await run(recover(s(), g.status, { olderThanMs: 0, settleMs: SETTLE }))).toMatchObject({ claimed: 1, notApplied: 1 })
      expect(g.asked).toEqual([])
    })

    it("leaves an intent of a client that kept no snapshot unresolved, and one whose status fails for later", async () => {
      await dead("r6", { beforeRequired: undefined }, null)
      await dead("r7")
      clock.now = t0 + LEASE
      const g = scripted("down")
      expect(await run(recover(s(), g.status, { olderThanMs: 0, settleMs: SETTLE }))).toMatchObject({ claimed: 2, unresolved: 2 })
      expect((await run(s().findByKey("r6")))?.outcome).toBeUndefined()
      expect((await run(s().findByKey("r7")))?.outcome).toBeUndefined()
    })
  })
}
