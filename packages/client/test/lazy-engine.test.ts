/**
 * The engine a client builds on its first call (`lazy-engine.ts`): every entry holds its call until
 * the engine's module has loaded, the load happens once for calls that wait together, a failed load
 * fails the calls that waited and is tried again by the next one, and once loaded each entry hands
 * its call to the engine directly. Each test gives the engine a module of its own, gated, so its
 * first load happens here (the shared one is loaded by the test setup).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { prepareKeys } from "../src/call/sign"
import { resolveConfig } from "../src/config"
import { InputError } from "../src/errors"
import { lazyEngine, type EngineModule } from "../src/lazy-engine"
import { lazyModule } from "../src/lazy-module"
import { openMemoryStore } from "../src/store/index"
import { merchant, saleInput } from "./support/fixtures"
import { asyncOk, statusOk, stubFetch, type Script } from "./support/stub"

/** An engine module whose loads wait for `open()`; `fail` makes the next load reject. */
function gatedModule() {
  let open!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  let loads = 0
  let failNext: Error | undefined
  const module = lazyModule<EngineModule>(async () => {
    loads++
    await gate
    if (failNext !== undefined) {
      const error = failNext
      failNext = undefined
      throw error
    }
    return import("../src/client-engine")
  })
  return { module, open, loads: () => loads, fail: (error: Error) => (failNext = error) }
}

function engineWith(scripts: Array<Script>, gated = gatedModule()) {
  const { fetch, sent } = stubFetch(scripts)
  const config = resolveConfig({ baseUrl: "http://gateway.test", ...merchant, fetch })
  return { engine: lazyEngine(config, prepareKeys(config), gated.module), sent, gated }
}

// Turns of the event loop: enough for anything not waiting on the gate to have happened.
const settle = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("a client's engine, built on its first call", () => {
  it("holds Promise calls until it has loaded, loads once for calls that wait together, then sends them", async () => {
    const { engine, sent, gated } = engineWith([asyncOk(), asyncOk()])
    const first = engine.pipeline.callPromise("SALE", saleInput())
    const second = engine.pipeline.callPromise("SALE", saleInput())
    await settle()
    expect(sent).toHaveLength(0)
    gated.open()
    const replies = (await Promise.all([first, second])) as Array<Record<string, unknown>>
    expect(replies.map((r) => r["status"])).toEqual(["processing", "processing"])
    expect(sent).toHaveLength(2)
    expect(gated.loads()).toBe(1)
  })

  it("checks an Effect call made before it loaded when the Effect runs, and one made after at once", async () => {
    const { engine, sent, gated } = engineWith([])
    const { email: _, ...noEmail } = saleInput()
    const lazyCall = engine.pipeline.call
    const early = lazyCall("SALE", noEmail)
    gated.open()
    const failed = await Effect.runPromise(Effect.flip(early))
    expect(failed).toBeInstanceOf(InputError)
    expect((failed as InputError).field).toBe("email")
    // built: the entry is the engine's own, its input error decided before the Effect runs
    expect(engine.pipeline.call).not.toBe(lazyCall)
    const late = Effect.runSyncExit(engine.pipeline.call("SALE", noEmail))
    expect(Exit.isFailure(late) && late.cause._tag === "Fail" ? late.cause.error : late).toBeInstanceOf(InputError)
    // an entry taken before still works
    const viaLazy = Effect.runSyncExit(lazyCall("SALE", noEmail))
    expect(Exit.isFailure(viaLazy) && viaLazy.cause._tag === "Fail" ? viaLazy.cause.error : viaLazy).toBeInstanceOf(InputError)
    expect(sent).toHaveLength(0)
  })

  it("is built with the client once its module has loaded", async () => {
    const gated = gatedModule()
    gated.open()
    await gated.module.load()
    const { engine } = engineWith([], gated)
    // the entry is the engine's own from the start: a call leaves it as it is
    const atCreation = engine.pipeline.call
    const { email: _, ...noEmail } = saleInput()
    const exit = Effect.runSyncExit(atCreation("SALE", noEmail))
    expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : exit).toBeInstanceOf(InputError)
    expect(engine.pipeline.call).toBe(atCreation)
    expect(gated.loads()).toBe(1)
  })

  it("fails the calls that waited on a failed load, and loads again on the next call", async () => {
    const { engine, sent, gated } = engineWith([asyncOk()])
    gated.fail(new Error("chunk missing"))
    const waiting = engine.pipeline.callPromise("SALE", saleInput())
    gated.open()
    await expect(waiting).rejects.toThrow("chunk missing")
    const reply = (await engine.pipeline.callPromise("SALE", saleInput())) as Record<string, unknown>
    expect(reply["status"]).toBe("processing")
    expect(gated.loads()).toBe(2)
    expect(sent).toHaveLength(1)
  })

  it("holds request(), status, the ledger's calls on an order and recover() the same way", async () => {
    const { engine, sent, gated } = engineWith([asyncOk(), statusOk("approved")])
    const store = await openMemoryStore()
    const ended: Array<string> = []
    const track = <A>(name: string, p: Promise<A>) => p.finally(() => ended.push(name))
    const request = track("request", engine.pipeline.requestPromise({
      path: "/api/v2/sale/{endpointId}", auth: "control", kind: "read",
      controlFields: ["endpointId", "client_orderid", "amount", "email"], fields: saleInput()
    }))
    const status = track("status", Effect.runPromise(engine.pipeline.status({ client_orderid: "c-1" })))
    const calls = track("callsOn", Effect.runPromise(engine.callsOn({ client_orderid: "c-1", orderid: "123" })))
    const recovered = track("recover", Effect.runPromise(engine.recover(store, {})))
    await settle()
    expect(ended).toEqual([])
    expect(sent).toHaveLength(0)
    gated.open()
    expect(((await request) as Record<string, unknown>)["status"]).toBe("processing")
    expect((await status).status).toBe("approved")
    expect(await calls).toEqual([])
    expect(await recovered).toEqual({ claimed: 0, applied: 0, notApplied: 0, unresolved: 0, unknown: 0 })
    expect(gated.loads()).toBe(1)
    await store.close()
  })
})
