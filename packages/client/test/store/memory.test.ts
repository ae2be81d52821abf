import { memoryBackend } from "../../src/store/memory"
import { makePayStore } from "../../src/store/service"
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
