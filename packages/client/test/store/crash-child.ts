/**
 * Child process of the PGlite crash test: opens the store in the directory given as argv[2],
 * records an intent and claims a callback, prints `ready`, and waits to be killed with SIGKILL.
 */
import { Effect } from "effect"
import { openPgliteStore } from "../../src/store/pglite"

const dir = process.argv[2]
if (dir === undefined) throw new Error("usage: crash-child.ts DIR")
const store = await openPgliteStore({ dataDir: dir, instanceId: "doomed" })
await Effect.runPromise(store.recordIntent(
  { idempotencyKey: "crash-1", operation: "SALE", client_orderid: "o-crash", amount: "12.34", currency: "EUR", endpoint: "1001" },
  { leaseMs: 1000 }
))
await Effect.runPromise(store.claimCallback("status=approved&orderid=1&client_orderid=o-crash", { leaseMs: 1000 }))
process.stdout.write("ready\n")
setInterval(() => undefined, 60_000)
