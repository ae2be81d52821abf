/**
 * The model's own checks, against worlds broken on purpose: each invariant of world.ts `check()`
 * reports the failure it exists for (a key moving money twice, a success without money, a
 * "not applied" after money moved, money no request of the model made), so a model run that
 * passes means the protocol held, not that the checks were blind.
 */
import { afterEach, describe, expect, it } from "vitest"
import { createPayClient, GatewayServerError, OutcomeUnknown, ReconcileConflict } from "../../src/index"
import { modelRuntime, replaySequence } from "./protocol-model"
import { memoryModelStore } from "./stores"
import type { VirtualTime } from "./virtual-time"
import { classify } from "./answers"
import { Book } from "./book"
import { checkInvariants, problemKind } from "./invariants"
import { World } from "./world"
import { testMerchant } from "@paykit/testkit"

let time: VirtualTime | undefined
afterEach(() => {
  time?.uninstall()
  time = undefined
})

async function openWorld(): Promise<World> {
  const runtime = modelRuntime(memoryModelStore())
  time = runtime.time
  time.install()
  await runtime.store.begin()
  return World.open({ instances: ["promise", "promise"], maxOrders: null }, runtime.store, time, `t${Math.random().toString(36).slice(2, 8)}`)
}

/** A client without a store that sends through the world's gateway, with any key it is given. */
function rogue(world: World) {
  return createPayClient({
    baseUrl: "http://127.0.0.1:4010",
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    endpointId: testMerchant.endpointId,
    fetch: world.gateway.fetchFor("rogue", () => false),
    timeoutMs: 300,
    reconcile: { settleMs: 300, pollIntervalMs: 50 }
  })
}

const kinds = (problems: ReadonlyArray<string>) => problems.map(problemKind)

describe("the model's invariants catch what they exist for", () => {
  it("a key whose request is sent twice (two captures under one key) is a double move", async () => {
    const world = await openWorld()
    try {
      const order = world.sim.orderByClientOrderId(world.coid(0))!
      const key = world.orderKey(0, 0)
      const pay = rogue(world)
      // Two sends of one key's capture, each under a fresh client-side key: what a broken ledger does.
      for (const n of [1, 2]) {
        await pay.capture({ client_orderid: world.coid(0), orderid: order.orderid, amount: "4.00", currency: "USD", comment: key }, { idempotencyKey: `${key}-${n}` })
      }
      await world.settle()
      expect(kinds(world.check())).toContain("1 double-move")
    } finally {
      await world.close()
    }
  })

  it("a success for a key whose request never moved money is a wrong verdict", async () => {
    const world = await openWorld()
    try {
      world.checkApplied(world.orderKey(0, 1), "a probe")
      expect(kinds(world.check())).toEqual(["3 applied-without-money"])
    } finally {
      await world.close()
    }
  })

  it("a not-applied answer after a send of its key moved money is a wrong verdict; one before the send is not", async () => {
    const world = await openWorld()
    try {
      const order = world.sim.orderByClientOrderId(world.coid(0))!
      const key = world.orderKey(0, 2)
      world.book.verdict({ key, kind: "notApplied", source: "a probe before", tag: "probe" })
      await rogue(world).capture({ client_orderid: world.coid(0), orderid: order.orderid, amount: "3.00", currency: "USD", comment: key }, { idempotencyKey: key })
      await world.settle()
      expect(world.check()).toEqual([])
      world.book.verdict({ key, kind: "notApplied", source: "a probe after", tag: "probe" })
      expect(kinds(world.check())).toEqual(["3 not-applied-but-moved"])
    } finally {
      await world.close()
    }
  })

  it("money moved by a request that bypassed the model's network is unexplained", async () => {
    const world = await openWorld()
    try {
      const order = world.sim.orderByClientOrderId(world.coid(0))!
      const straight = createPayClient({
        baseUrl: "http://127.0.0.1:4010",
        login: testMerchant.login,
        controlKey: testMerchant.controlKey,
        endpointId: testMerchant.endpointId,
        fetch: world.sim.fetch
      })
      await straight.capture({ client_orderid: world.coid(0), orderid: order.orderid, amount: "2.00", currency: "USD" })
      await world.settle()
      expect(kinds(world.check())).toContain("2 unexplained-money")
    } finally {
      await world.close()
    }
  })

  it("a call still unanswered past its deadline breaks invariant 3", () => {
    const call = { n: 1, what: "capture", instance: "i0.0", startedAt: 1000, deadlineMs: 2000, ended: false }
    expect(checkInvariants(new Book(), [call], 3100)).toEqual([])
    expect(kinds(checkInvariants(new Book(), [call], 3101))).toEqual(["3 outlives-deadline"])
    expect(checkInvariants(new Book(), [{ ...call, ended: true }], 9000)).toEqual([])
  })

  it("answers are read by what they say about the key's money", () => {
    const unknown = (mayHaveApplied: boolean) =>
      new OutcomeUnknown({ operation: "capture", client_orderid: "c", lastError: "Timeout", mayHaveApplied, next: "", idempotencyKey: "k" })
    expect(classify({ ok: true, value: {} })).toBe("applied")
    expect(classify({ ok: false, error: unknown(false) })).toBe("notApplied")
    expect(classify({ ok: false, error: unknown(true) })).toBe("unknown")
    expect(classify({ ok: false, error: new ReconcileConflict({ operation: "capture", client_orderid: "c", field: "amount", expected: "4.00", found: "7.00", idempotencyKey: "k" }) })).toBe("conflict")
    // A money call whose send may have landed never ends with a transient error: one says nothing was sent.
    expect(classify({ ok: false, error: new GatewayServerError({ operation: "capture", httpStatus: 503, errorCode: "", errorMessage: "" }) })).toBe("nothingSent")
    expect(classify({ ok: false, error: new Error("a defect") })).toBeUndefined()
  })

  it("a clean sequence keeps every invariant, and its calls end in the book", async () => {
    const world = await replaySequence("memory", { instances: ["promise", "effect"], maxOrders: null }, [
      { c: "call", slot: 0, s: 0, k: 0 },
      { c: "advance", ms: 100 },
      { c: "call", slot: 1, s: 0, k: 0 },
      { c: "call", slot: 1, s: 1, k: 2 },
      { c: "recover", slot: 0 }
    ])
    expect(world.book.moneyOf(world.orderKey(0, 0))).toHaveLength(1)
    expect(world.book.verdicts.filter((v) => v.key === world.orderKey(0, 0)).map((v) => v.kind)).toEqual(["applied", "applied"])
  })
})

