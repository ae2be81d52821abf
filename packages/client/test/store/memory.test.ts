import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { memoryBackend, memoryStoreLayer, openMemoryStore } from "../../src/store/memory"
import { makePayStore, PayStore } from "../../src/store/service"
import { storeSuite } from "./suite"

storeSuite("memory", async () => {
  let backend = memoryBackend()
  let store = makePayStore(backend, { instanceId: "mem-a" })
  let peer = makePayStore(backend, { instanceId: "mem-b" })
  return {
    store: () => store,
    peer: () => peer,
    reset: async () => {
      backend = memoryBackend()
      store = makePayStore(backend, { instanceId: "mem-a" })
      peer = makePayStore(backend, { instanceId: "mem-b" })
      await backend.migrate()
    },
    dump: async () => JSON.stringify(backend.snapshot()),
    reopen: async () => ({ ...makePayStore(backend, { instanceId: "mem-c" }), close: async () => undefined }),
    close: async () => undefined
  }
})

describe("memory adapter: layer and Promise handle", () => {
  it("builds as a layer (a fresh store per build) and opens as a handle for createPayClient({ store })", async () => {
    const program = Effect.flatMap(PayStore, (store) =>
      Effect.zip(store.recordIntent({ idempotencyKey: "l1", operation: "SALE", client_orderid: "o", endpoint: "1001" }, { leaseMs: 1000 }), Effect.succeed(store.adapter)))
    const [first, adapter] = await Effect.runPromise(Effect.provide(program, memoryStoreLayer({ instanceId: "mem-layer" })))
    expect(adapter).toBe("memory")
    expect(first).toMatchObject({ _tag: "Recorded", intent: { owner: "mem-layer" } })
    const again = await Effect.runPromise(Effect.provide(program, memoryStoreLayer()))
    expect(again[0]._tag).toBe("Recorded")

    const handle = await openMemoryStore()
    expect(handle.instanceId).toMatch(/^paykit-[0-9a-f-]{36}$/)
    expect((await Effect.runPromise(handle.claimCallback("a=1", { leaseMs: 1000 })))._tag).toBe("Claimed")
    await handle.close()
    await handle.close()
  })

  it("refuses an unusable instance id by rule", async () => {
    await expect(openMemoryStore({ instanceId: "" })).rejects.toMatchObject({ _tag: "StoreInputError", field: "instanceId" })
  })
})
