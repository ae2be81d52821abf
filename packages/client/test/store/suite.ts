/**
 * The one adapter suite: the same tests against memory, PGlite and a real PostgreSQL server. Each
 * adapter's file calls {@link storeSuite} with a harness; time is a manual clock, so a lease runs out
 * when a test moves the clock, never by sleeping.
 */
import { Effect } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { storeNonceStore } from "../../src/store/nonces"
import type { Intent, IntentInput } from "../../src/store/types"
import { beforeSnapshotTests } from "./before-suite"
import { command, compareWithModel } from "./model"
import { leakyResult, ManualClock, saleRequest, secrets, type Harness } from "./support"

const T0 = 1_800_000_000_000
const LEASE = 30_000

function intent(key: string, extra: Partial<IntentInput> = {}): IntentInput {
  return { idempotencyKey: key, operation: "SALE", client_orderid: `order-${key}`, amount: "10.00", currency: "USD", endpoint: "1001", ...extra }
}

/** Runs the suite against one adapter. `open` may take long (PGlite, a server): it gets a minute. */
export function storeSuite(name: string, open: () => Promise<Harness>): void {
  describe(`store suite: ${name}`, () => {
    let h: Harness
    const clock = new ManualClock(T0)
    const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(Effect.withClock(effect, clock))
    const fail = <A, E>(effect: Effect.Effect<A, E>): Promise<E> =>
      Effect.runPromise(Effect.withClock(Effect.flip(effect), clock)) as Promise<E>
    const all = <A, E>(effects: ReadonlyArray<Effect.Effect<A, E>>) => run(Effect.all(effects, { concurrency: "unbounded" }))
    const s = () => h.store()

    beforeAll(async () => {
      h = await open()
    }, 120_000)
    afterAll(async () => {
      await h?.close()
    }, 60_000)
    beforeEach(async () => {
      clock.now = T0
      await h.reset()
    })

    describe("payment intents", () => {
      it("records a new intent with its fields, the clock's time and a lease", async () => {
        const r = await run(s().recordIntent(intent("k1", { orderid: undefined }), { leaseMs: LEASE, owner: "a" }))
        expect(r._tag).toBe("Recorded")
        expect(r.intent).toMatchObject({
          idempotencyKey: "k1", operation: "SALE", client_orderid: "order-k1", amount: "10.00", currency: "USD", endpoint: "1001",
          createdAt: T0, owner: "a", leaseUntil: T0 + LEASE, attempts: 1
        })
        expect(r.intent.outcome).toBeUndefined()
        expect(await run(s().findByKey("k1"))).toEqual(r.intent)
        expect(await run(s().findByKey("nope"))).toBeUndefined()
      })

      it("answers the same key while it is held as InFlight, and a different request under it as Conflict", async () => {
        await run(s().recordIntent(intent("k2"), { leaseMs: LEASE, owner: "a" }))
        clock.now += 1000
        const again = await run(s().recordIntent(intent("k2", { amount: "10.0" }), { leaseMs: LEASE, owner: "b" }))
        expect(again._tag).toBe("InFlight")
        expect(again.intent.owner).toBe("a")
        const other = await run(s().recordIntent(intent("k2", { amount: "99.00", operation: "PREAUTH" }), { leaseMs: LEASE, owner: "b" }))
        expect(other._tag).toBe("Conflict")
        expect(other._tag === "Conflict" ? other.fields : []).toEqual(["operation", "amount"])
      })

      it("keeps the first outcome for good and replays it to a second call with the key", async () => {
        await run(s().recordIntent(intent("k3"), { leaseMs: LEASE, owner: "a" }))
        clock.now += 500
        const data = { type: "async-response", "paynet-order-id": "77", list: [1, "two", { three: null }], ok: true }
        const first = await run(s().recordOutcome("k3", { _tag: "Returned", status: "approved", orderid: "77", data }))
        expect(first._tag).toBe("Recorded")
        const second = await run(s().recordOutcome("k3", { _tag: "Failed", errorTag: "Timeout" }))
        expect(second._tag).toBe("AlreadyFinished")
        const replay = await run(s().recordIntent(intent("k3"), { leaseMs: LEASE, owner: "b" }))
        expect(replay._tag).toBe("Finished")
        expect(replay.intent.outcome).toEqual({ _tag: "Returned", status: "approved", orderid: "77", data })
        expect(replay.intent.finishedAt).toBe(T0 + 500)
        clock.now += 10 * LEASE
        expect((await run(s().recordIntent(intent("k3"), { leaseMs: LEASE, owner: "c" })))._tag).toBe("Finished")
      })

      it("records a failure outcome with its error tag", async () => {
        await run(s().recordIntent(intent("k3f"), { leaseMs: LEASE, owner: "a" }))
        await run(s().recordOutcome("k3f", { _tag: "Failed", errorTag: "GatewayValidationError", data: { errorCode: "card-declined" } }))
        const found = await run(s().findByKey("k3f"))
        expect(found?.outcome).toEqual({ _tag: "Failed", errorTag: "GatewayValidationError", orderid: undefined, data: { errorCode: "card-declined" } })
      })

      it("refuses an outcome for a key nobody recorded", async () => {
        const e = await fail(s().recordOutcome("ghost", { _tag: "Returned", status: "approved" }))
        expect(e).toMatchObject({ _tag: "StoreInputError", field: "idempotencyKey", rule: "has no recorded intent" })
      })

      it("lists an order's intents (every state, outcome data kept) oldest first, another order's never, and forgets purged ones", async () => {
        const onOrder = (key: string, operation: string, amount: string) => intent(key, { operation, client_orderid: "shared-order", orderid: "1000001", amount })
        await run(s().recordIntent(onOrder("io-1", "CAPTURE", "3.00"), { leaseMs: LEASE, owner: "a" }))
        clock.now += 10
        await run(s().recordIntent(onOrder("io-2", "RETURN", "5.00"), { leaseMs: LEASE, owner: "a" }))
        clock.now += 10
        await run(s().recordIntent(intent("io-3"), { leaseMs: LEASE, owner: "a" }))
        await run(s().recordOutcome("io-1", { _tag: "Returned", status: "processing", orderid: "1000001", data: { "serial-number": "sn-1" } }))
        const found = await run(s().intentsOfOrder("shared-order"))
        expect(found.map((i) => [i.idempotencyKey, i.operation, i.orderid])).toEqual([["io-1", "CAPTURE", "1000001"], ["io-2", "RETURN", "1000001"]])
        expect(found[0]!.outcome).toMatchObject({ _tag: "Returned", data: { "serial-number": "sn-1" } })
        expect(found[1]!.outcome).toBeUndefined()
        expect(await run(s().intentsOfOrder("shared-order", { limit: 1 }))).toHaveLength(1)
        expect(await run(s().intentsOfOrder("no-such-order"))).toEqual([])
        expect(await fail(s().intentsOfOrder("shared-order", { limit: 0 }))).toMatchObject({ _tag: "StoreInputError", field: "limit" })
        clock.now += 60_000
        await run(s().purge(1000))
        expect((await run(s().intentsOfOrder("shared-order"))).map((i) => i.idempotencyKey)).toEqual(["io-2"])
      })

      it("lets a second caller take over an intent whose holder's lease ran out, and the old holder cannot extend it", async () => {
        await run(s().recordIntent(intent("k4"), { leaseMs: LEASE, owner: "a" }))
        clock.now += LEASE
        const taken = await run(h.peer().recordIntent(intent("k4"), { leaseMs: LEASE, owner: "b" }))
        expect(taken._tag).toBe("TakenOver")
        expect(taken.intent).toMatchObject({ owner: "b", attempts: 2, leaseUntil: T0 + 2 * LEASE, createdAt: T0 })
        expect(await run(s().extendIntentLease("k4", { leaseMs: LEASE, owner: "a" }))).toBe(false)
        expect(await run(h.peer().extendIntentLease("k4", { leaseMs: 5 * LEASE, owner: "b" }))).toBe(true)
        expect((await run(s().findByKey("k4")))?.leaseUntil).toBe(T0 + LEASE + 5 * LEASE)
      })

      it("gives exactly one of many simultaneous callers with one key the intent", async () => {
        const callers = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).recordIntent(intent("race"), { leaseMs: LEASE, owner: `o${i}` }))
        const results = await all(callers)
        expect(results.filter((r) => r._tag === "Recorded")).toHaveLength(1)
        expect(results.filter((r) => r._tag === "InFlight")).toHaveLength(11)
      })

      it("gives exactly one of many simultaneous callers an expired intent", async () => {
        await run(s().recordIntent(intent("race2"), { leaseMs: LEASE, owner: "dead" }))
        clock.now += LEASE + 1
        const results = await all(Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).recordIntent(intent("race2"), { leaseMs: LEASE, owner: `o${i}` })))
        expect(results.filter((r) => r._tag === "TakenOver")).toHaveLength(1)
        expect(results.filter((r) => r._tag === "InFlight")).toHaveLength(11)
      })

      it("lets a joining caller wait for the outcome, or for the holder's lease to run out", async () => {
        await run(s().recordIntent(intent("j1"), { leaseMs: LEASE, owner: "a" }))
        await run(s().recordOutcome("j1", { _tag: "Returned", status: "declined" }))
        expect((await run(h.peer().awaitIntent("j1")))?.outcome).toMatchObject({ status: "declined" })
        expect(clock.now).toBe(T0)
        await run(s().recordIntent(intent("j2"), { leaseMs: LEASE, owner: "hung" }))
        const waited = await run(h.peer().awaitIntent("j2", { pollMs: 1000 }))
        expect(waited?.outcome).toBeUndefined()
        expect(clock.now).toBe(T0 + LEASE)
        expect((await run(h.peer().recordIntent(intent("j2"), { leaseMs: LEASE, owner: "b" })))._tag).toBe("TakenOver")
        expect(await run(s().awaitIntent("nobody"))).toBeUndefined()
      })

      it("refuses bad input by field and rule and writes nothing", async () => {
        const cases: Array<[Partial<IntentInput>, string]> = [
          [{ amount: "10.0.0" }, "amount"],
          [{ amount: 10.5 as unknown as string }, "amount"],
          [{ amount: "-1.00" }, "amount"],
          [{ currency: "usd" }, "currency"],
          [{ client_orderid: "" }, "client_orderid"],
          [{ endpoint: "" }, "endpoint"]
        ]
        for (const [extra, field] of cases) {
          const e = await fail(s().recordIntent(intent("bad", extra), { leaseMs: LEASE }))
          expect(e).toMatchObject({ _tag: "StoreInputError", method: "recordIntent", field })
        }
        expect(await fail(s().recordIntent(intent("bad"), { leaseMs: 0 }))).toMatchObject({ field: "leaseMs" })
        expect(await run(s().findByKey("bad"))).toBeUndefined()
      })
    })

    describe("the intent protocol's fencing (docs/fleet.md#the-intent-protocol)", () => {
      it("records when a holder's sends end by: its own deadline when it records or re-opens, kept by a take-over", async () => {
        const r = await run(s().recordIntent(intent("f1"), { leaseMs: LEASE, owner: "a", sendsWithinMs: 4000 }))
        expect(r.intent.sendsEndBy).toBe(T0 + 4000)
        expect((await run(s().findByKey("f1")))?.sendsEndBy).toBe(T0 + 4000)
        clock.now += LEASE
        const taken = await run(h.peer().recordIntent(intent("f1"), { leaseMs: LEASE, owner: "b", sendsWithinMs: 9000 }))
        expect(taken._tag).toBe("TakenOver")
        // The taker has sent nothing yet: the window of what was sent still runs from the first holder's deadline.
        expect(taken.intent.sendsEndBy).toBe(T0 + 4000)
        // Before it sends, the taker moves it (with its token).
        expect(await run(h.peer().extendIntentLease("f1", { leaseMs: LEASE, owner: "b", sendsWithinMs: 2000 }, { attempt: 2 }))).toBe(true)
        expect((await run(s().findByKey("f1")))?.sendsEndBy).toBe(T0 + LEASE + 2000)
        await run(h.peer().recordOutcome("f1", { _tag: "Failed", errorTag: "NotApplied" }, { attempt: 2 }))
        clock.now += 10
        const reopened = await run(s().reopenIntent("f1", { leaseMs: LEASE, owner: "c", sendsWithinMs: 500 }))
        expect(reopened).toMatchObject({ attempts: 3, sendsEndBy: T0 + LEASE + 10 + 500 })
      })

      it("refuses a failure from a holder whose token is stale, and never drops a success in favour of a failure", async () => {
        await run(s().recordIntent(intent("f2"), { leaseMs: LEASE, owner: "a" }))
        clock.now += LEASE
        await run(h.peer().recordIntent(intent("f2"), { leaseMs: LEASE, owner: "b" }))
        // The first holder (token 1) lost the intent to the second (token 2).
        expect(await run(s().extendIntentLease("f2", { leaseMs: LEASE, owner: "a" }, { attempt: 1 }))).toBe(false)
        const stale = await run(s().recordOutcome("f2", { _tag: "Failed", errorTag: "NotApplied" }, { attempt: 1 }))
        expect(stale._tag).toBe("Stale")
        expect((await run(s().findByKey("f2")))?.outcome).toBeUndefined()
        expect((await run(h.peer().recordOutcome("f2", { _tag: "Failed", errorTag: "NotApplied" }, { attempt: 2 })))._tag).toBe("Recorded")
        // Money moved after all (the stale holder's send landed): its success replaces the "not applied".
        const late = await run(s().recordOutcome("f2", { _tag: "Returned", status: "approved", orderid: "9" }, { attempt: 1 }))
        expect(late._tag).toBe("Recorded")
        expect((await run(s().findByKey("f2")))?.outcome).toMatchObject({ _tag: "Returned", status: "approved" })
        // A success stands for good: no failure and no second success replaces it.
        expect((await run(h.peer().recordOutcome("f2", { _tag: "Failed", errorTag: "NotApplied" })))._tag).toBe("AlreadyFinished")
        expect((await run(h.peer().recordOutcome("f2", { _tag: "Returned", status: "declined" })))._tag).toBe("AlreadyFinished")
        expect((await run(s().findByKey("f2")))?.outcome).toMatchObject({ status: "approved" })
      })

      it("releases an unknown intent at once with the time its sends ended, so the next caller takes it over", async () => {
        await run(s().recordIntent(intent("f3"), { leaseMs: LEASE, owner: "a", sendsWithinMs: 5000 }))
        clock.now += 700
        expect(await run(s().releaseIntent("f3", { attempt: 2 }))).toBe(false)
        expect(await run(s().releaseIntent("f3", { attempt: 1 }))).toBe(true)
        expect(await run(s().findByKey("f3"))).toMatchObject({ leaseUntil: T0 + 700, sendsEndBy: T0 + 700 })
        expect((await run(h.peer().recordIntent(intent("f3"), { leaseMs: LEASE, owner: "b" })))._tag).toBe("TakenOver")
      })

      it("holds one lease per order: another call waits, the holder's own key re-enters, a release or the lease's end frees it", async () => {
        const a = await run(s().takeOrderLease("7001", { idempotencyKey: "cap-a", leaseMs: 1000, owner: "a" }))
        expect(a).toMatchObject({ _tag: "Taken", leaseUntil: T0 + 1000 })
        expect(await run(h.peer().takeOrderLease("7001", { idempotencyKey: "cap-b", leaseMs: 1000, owner: "b" }))).toEqual({ _tag: "Held", leaseUntil: T0 + 1000 })
        // Another order is free.
        expect((await run(h.peer().takeOrderLease("7002", { idempotencyKey: "cap-b", leaseMs: 1000, owner: "b" })))._tag).toBe("Taken")
        // The same call (a resume under its key) re-enters with a new token.
        clock.now += 10
        const again = await run(h.peer().takeOrderLease("7001", { idempotencyKey: "cap-a", leaseMs: 1000, owner: "b" }))
        expect(again._tag).toBe("Taken")
        const token = again._tag === "Taken" ? again.token : 0
        expect(token).toBeGreaterThan(a._tag === "Taken" ? a.token : 0)
        // A stale token releases nothing.
        expect(await run(s().releaseOrderLease("7001", { idempotencyKey: "cap-a", token: a._tag === "Taken" ? a.token : 1 }))).toBe(false)
        expect((await run(s().takeOrderLease("7001", { idempotencyKey: "cap-b", leaseMs: 1000 })))._tag).toBe("Held")
        expect(await run(s().releaseOrderLease("7001", { idempotencyKey: "cap-a", token }))).toBe(true)
        expect((await run(s().takeOrderLease("7001", { idempotencyKey: "cap-b", leaseMs: 1000 })))._tag).toBe("Taken")
        // Nobody releases it: its lease's end frees it.
        clock.now += 1000
        expect((await run(s().takeOrderLease("7001", { idempotencyKey: "cap-c", leaseMs: 1000 })))._tag).toBe("Taken")
      })

      it("gives exactly one of many simultaneous callers an order's lease", async () => {
        const answers = await all(Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).takeOrderLease("7100", { idempotencyKey: `k-${i}`, leaseMs: 1000 })))
        expect(answers.filter((a) => a._tag === "Taken")).toHaveLength(1)
      })

      it("refuses bad protocol input by field and rule", async () => {
        expect(await fail(s().releaseIntent("x", { attempt: 0 }))).toMatchObject({ _tag: "StoreInputError", field: "attempt" })
        expect(await fail(s().recordIntent(intent("x"), { leaseMs: 10, sendsWithinMs: -1 }))).toMatchObject({ _tag: "StoreInputError", field: "sendsWithinMs" })
        expect(await fail(s().takeOrderLease("", { idempotencyKey: "k", leaseMs: 10 }))).toMatchObject({ _tag: "StoreInputError", field: "orderid" })
        expect(await fail(s().releaseOrderLease("7001", { idempotencyKey: "k", token: 0 }))).toMatchObject({ _tag: "StoreInputError", field: "token" })
      })
    })

    describe("recover's work claiming (unfinished)", () => {
      it("claims old unfinished intents whose lease ran out, oldest first, and holds them for the claimer", async () => {
        await run(s().recordIntent(intent("u1"), { leaseMs: LEASE, owner: "dead" }))
        clock.now += 10
        await run(s().recordIntent(intent("u2"), { leaseMs: LEASE, owner: "dead" }))
        await run(s().recordIntent(intent("u3"), { leaseMs: LEASE, owner: "dead" }))
        await run(s().recordOutcome("u3", { _tag: "Returned", status: "approved" }))
        clock.now = T0 + LEASE + 100
        await run(s().recordIntent(intent("u4"), { leaseMs: 1, owner: "young" }))
        clock.now += 5
        const claimed = await run(s().unfinished({ olderThanMs: 60, leaseMs: LEASE, owner: "rec" }))
        expect(claimed.map((i) => i.idempotencyKey)).toEqual(["u1", "u2"])
        expect(claimed[0]).toMatchObject({ owner: "rec", attempts: 2, leaseUntil: clock.now + LEASE })
        expect(await run(h.peer().unfinished({ olderThanMs: 60, leaseMs: LEASE, owner: "rec2" }))).toEqual([])
        // A live holder's lease protects its intent from recover() whatever its age.
        await run(s().recordIntent(intent("u5"), { leaseMs: 10 * LEASE, owner: "alive" }))
        clock.now += 2 * LEASE
        const later = await run(s().unfinished({ leaseMs: LEASE, owner: "rec3" }))
        expect(later.map((i) => i.idempotencyKey)).toEqual(["u1", "u2", "u4"])
      })

      it("hands concurrent claimers disjoint sets that together cover all the work", async () => {
        for (let i = 0; i < 60; i++) await run(s().recordIntent(intent(`w${String(i).padStart(2, "0")}`), { leaseMs: 1, owner: "dead" }))
        clock.now += 1000
        const batches = await all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).unfinished({ leaseMs: LEASE, owner: `r${i}`, limit: 15 })))
        const keys = batches.flat().map((intent: Intent) => intent.idempotencyKey)
        expect(new Set(keys).size).toBe(keys.length)
        expect(keys.length).toBe(60)
        for (const [i, batch] of batches.entries()) for (const claimed of batch) expect(claimed.owner).toBe(`r${i}`)
      })
    })

    describe("callbacks exactly once", () => {
      const q = "status=approved&orderid=9001&client_orderid=o-1&type=sale&amount=10.00&control=abc"

      it("claims, refuses a second claim while running, completes once, and is done for good", async () => {
        expect(await run(s().claimCallback(q, { leaseMs: LEASE, owner: "a" }))).toEqual({ _tag: "Claimed", attempt: 1, leaseUntil: T0 + LEASE })
        expect(await run(h.peer().claimCallback(`?${q}`, { leaseMs: LEASE, owner: "b" }))).toEqual({ _tag: "RunningElsewhere", owner: "a", leaseUntil: T0 + LEASE })
        clock.now += 100
        expect(await run(s().completeCallback(q))).toBe("completed")
        expect(await run(h.peer().completeCallback(q))).toBe("already-completed")
        for (const later of [1, LEASE, 100 * LEASE]) {
          clock.now = T0 + later
          expect(await run(h.peer().claimCallback(q, { leaseMs: LEASE, owner: "c" }))).toEqual({ _tag: "Done", completedAt: T0 + 100 })
        }
        expect(await run(s().completeCallback(`${q}&x=1`))).toBe("not-claimed")
        expect((await run(s().claimCallback(`${q}&x=1`, { leaseMs: LEASE })))._tag).toBe("Claimed")
      })

      it("lets exactly one of many simultaneous deliveries of one callback run", async () => {
        const results = await all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).claimCallback(q, { leaseMs: LEASE, owner: `i${i}` })))
        expect(results.filter((r) => r._tag === "Claimed")).toHaveLength(1)
        expect(results.filter((r) => r._tag === "RunningElsewhere")).toHaveLength(15)
      })

      it("hands a callback whose holder crashed to another instance after the lease, once", async () => {
        await run(s().claimCallback(q, { leaseMs: LEASE, owner: "crashed" }))
        clock.now += LEASE - 1
        expect((await run(h.peer().claimCallback(q, { leaseMs: LEASE, owner: "b" })))._tag).toBe("RunningElsewhere")
        clock.now += 1
        const results = await all(Array.from({ length: 8 }, (_, i) => h.peer().claimCallback(q, { leaseMs: LEASE, owner: `t${i}` })))
        const winners = results.filter((r) => r._tag === "Claimed")
        expect(winners).toEqual([{ _tag: "Claimed", attempt: 2, leaseUntil: T0 + 2 * LEASE }])
        expect(await run(h.peer().completeCallback(q))).toBe("completed")
        expect((await run(s().claimCallback(q, { leaseMs: LEASE, owner: "crashed" })))._tag).toBe("Done")
      })

      it("lets a failed handler release its claim so the gateway's retry runs at once, and only the holder can", async () => {
        await run(s().claimCallback(q, { leaseMs: LEASE, owner: "a" }))
        expect(await run(h.peer().releaseCallback(q, "b"))).toBe(false)
        expect(await run(s().releaseCallback(q, "a"))).toBe(true)
        expect(await run(h.peer().claimCallback(q, { leaseMs: LEASE, owner: "b" }))).toMatchObject({ _tag: "Claimed", attempt: 2 })
        await run(h.peer().completeCallback(q))
        expect(await run(h.peer().releaseCallback(q, "b"))).toBe(false)
        expect((await run(s().claimCallback(q, { leaseMs: LEASE })))._tag).toBe("Done")
      })

      it("keeps callbacks that differ by one byte apart and stores only the query's SHA-256", async () => {
        await run(s().claimCallback(q, { leaseMs: LEASE }))
        expect((await run(s().claimCallback(q.replace("10.00", "10.01"), { leaseMs: LEASE })))._tag).toBe("Claimed")
        const dump = await h.dump()
        expect(dump).not.toContain("client_orderid=o-1")
        expect(dump).not.toContain("orderid=9001")
      })
    })

    describe("OAuth nonces", () => {
      it("remembers a nonce once, across instances, until it expires", async () => {
        const now = T0 / 1000
        expect(await run(s().rememberNonce("ck", "n1", now + 300, now))).toBe(true)
        expect(await run(h.peer().rememberNonce("ck", "n1", now + 300, now + 10))).toBe(false)
        expect(await run(s().rememberNonce("ck2", "n1", now + 300, now))).toBe(true)
        expect(await run(s().rememberNonce("ck", "n1", now + 700, now + 301))).toBe(true)
        const racers = await all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? s() : h.peer()).rememberNonce("ck", "n2", now + 300, now)))
        expect(racers.filter(Boolean)).toHaveLength(1)
        const nonceStore = storeNonceStore(h.peer())
        expect(await nonceStore.remember("ck", "n3", now + 300, now)).toBe(true)
        expect(await nonceStore.remember("ck", "n3", now + 300, now)).toBe(false)
      })
    })

    describe("retention", () => {
      it("purges finished intents, completed callbacks and expired nonces, and nothing unfinished", async () => {
        await run(s().recordIntent(intent("p1"), { leaseMs: LEASE }))
        await run(s().recordOutcome("p1", { _tag: "Returned", status: "approved" }))
        await run(s().recordIntent(intent("p2"), { leaseMs: LEASE }))
        await run(s().claimCallback("a=1", { leaseMs: LEASE }))
        await run(s().completeCallback("a=1"))
        await run(s().claimCallback("a=2", { leaseMs: LEASE }))
        await run(s().rememberNonce("ck", "old", T0 / 1000 + 1, T0 / 1000))
        clock.now += 3_600_000
        expect(await run(s().purge(60_000))).toEqual({ intents: 1, callbacks: 1, nonces: 1 })
        expect(await run(s().findByKey("p1"))).toBeUndefined()
        expect(await run(s().findByKey("p2"))).toBeDefined()
        expect((await run(s().claimCallback("a=2", { leaseMs: LEASE })))._tag).toBe("Claimed")
        expect(await run(s().purge(0))).toEqual({ intents: 0, callbacks: 0, nonces: 0 })
      })
    })

    describe("migrations", () => {
      it("applying the migrations again is a no-op, from this instance or a new one", async () => {
        await run(s().recordIntent(intent("m1"), { leaseMs: LEASE }))
        const again = await run(s().migrate)
        expect(again.length).toBeGreaterThan(0)
        expect(again.every((m) => !m.applied)).toBe(true)
        const other = await h.reopen()
        try {
          expect((await run(other.migrate)).every((m) => !m.applied)).toBe(true)
          expect((await run(other.findByKey("m1")))?.client_orderid).toBe("order-m1")
        } finally {
          await other.close()
        }
      })
    })

    describe("one semantics", () => {
      it("answers every random command sequence exactly as the memory model does", async () => {
        await fc.assert(
          fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), (cmds) => compareWithModel(s(), h.reset, cmds, T0)),
          { numRuns: 40 }
        )
      }, 120_000)
    })

    describe("no card data, no secrets", () => {
      it("keeps no PAN, CVV, control digest or key from a call that carried them", async () => {
        const call = saleRequest("leak-1")
        await run(s().recordIntent(call as IntentInput, { leaseMs: LEASE, owner: "leak-test" }))
        await run(s().recordOutcome("leak-1", { _tag: "Returned", status: "approved", orderid: "9001", data: leakyResult() }))
        await run(s().recordIntent({ ...call, idempotencyKey: "leak-2" } as IntentInput, { leaseMs: LEASE, owner: "leak-test" }))
        await run(s().recordOutcome("leak-2", { _tag: "Failed", errorTag: "GatewayValidationError", data: leakyResult() }))
        const dump = await h.dump()
        expect(dump).toContain("order-leak-1")
        for (const pan of secrets.pans) expect(dump).not.toContain(pan)
        expect(dump).not.toContain(secrets.control)
        expect(dump).not.toContain("BEGIN PRIVATE KEY")
        expect(dump).not.toMatch(/cvv|\b737\b|JANE DOE|card_printed_name/i)
        const kept = await run(s().findByKey("leak-1"))
        const data = kept?.outcome?.data as Record<string, unknown>
        expect(data["error-message"]).toBe("card pan=400000******0002x rejected; ccn_400000******3220 retried")
        expect(data["paynet-order-id"]).toBe("9001")
      })
    })

    beforeSnapshotTests(() => h, run, clock, T0)
  })
}
