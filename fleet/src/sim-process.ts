/**
 * The simulator as its own process (a child of the fleet run, on the real clock): the gateway every
 * worker talks to over HTTP, and whose ledger the audit reads. It exits when its parent goes away
 * (the IPC channel closes), so a dead run leaves no simulator.
 *
 * With retention on (`FLEET_RETENTION_MAX_ORDERS`) the simulator forgets final orders; the audit
 * still needs every order that ever existed (a second order for one payment may come after the
 * first was forgotten), so each order and its callback log are archived here as they are forgotten.
 *
 * It also plays the gateway's back office: for each planned back-office capture (sent over IPC) it
 * waits for the payment's preauth to be approved, waits the planned delay, and captures the planned
 * amount itself, through its own fetch, beside the merchant's instances and their store.
 *
 * IPC: in `{ t: "back-office", captures }`, `{ t: "orders" }` (answered `{ t: "orders", kept,
 * forgotten }`), `{ t: "keep", dir }` (answered `{ t: "kept" }` once orders, callbacks and snapshot
 * are written there); out `{ t: "ready", url }`, `{ t: "back-office", ... }` per capture made.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { createPayClient } from "@paykit/client"
import { createSimulator, testMerchant, type CallbackAttempt, type OrderView } from "@paykit/testkit"
// The engine is the testkit's internal: the archive needs the moment an order is forgotten, which
// no public API reports (bench/simulator/hot-path.ts reads the engine the same way).
import { engineOf } from "../../packages/testkit/src/simulator/create"
import type { PlannedBackOffice } from "./plan"

const processingDelayMs = Number(process.env["FLEET_PROCESSING_DELAY_MS"] ?? "50")
const maxOrders = process.env["FLEET_RETENTION_MAX_ORDERS"]
// Forgetting by count, by age, or both (the simulator's retention policy).
function retentionOf(orders: string | undefined, ageMs: string | undefined): { retention?: { maxOrders?: number; maxAgeMs?: number } } {
  const retention: { maxOrders?: number; maxAgeMs?: number } = {}
  if (orders !== undefined && orders !== "") retention.maxOrders = Number(orders)
  if (ageMs !== undefined && ageMs !== "") retention.maxAgeMs = Number(ageMs)
  return Object.keys(retention).length === 0 ? {} : { retention }
}
const sim = createSimulator({
  clock: "real",
  processingDelayMs,
  ...(retentionOf(maxOrders, process.env["FLEET_RETENTION_MAX_AGE_MS"]))
})
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
process.on("disconnect", () => process.exit(0))
const send = (message: Record<string, unknown>) => process.send?.(message)

// --- the archive of forgotten orders ------------------------------------------------------------------
const forgottenOrders: OrderView[] = []
const forgottenCallbacks: CallbackAttempt[] = []
const engine = engineOf(sim)
if (engine === undefined) throw new Error("sim-process: no engine behind the simulator")
const forget = engine.store.delete.bind(engine.store)
engine.store.delete = (order) => {
  const view = sim.order(order.orderid)
  if (view !== undefined) forgottenOrders.push(view)
  forget(order)
}
const forgetCallbacks = engine.callbacks.forgetOrders.bind(engine.callbacks)
engine.callbacks.forgetOrders = (orderids) => {
  for (const attempt of sim.callbackAttempts()) if (orderids.has(attempt.orderid)) forgottenCallbacks.push(attempt)
  forgetCallbacks(orderids)
}

// --- the back office ----------------------------------------------------------------------------------
const backOffice = createPayClient({
  baseUrl: server.url,
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  endpointId: testMerchant.endpointId,
  fetch: sim.fetch,
  retry: { maxRetries: 0 }
})
const waiting = new Map<string, PlannedBackOffice>()
const tagOf = (e: unknown) => (typeof e === "object" && e !== null && typeof (e as { _tag?: unknown })._tag === "string" ? (e as { _tag: string })._tag : "untyped")
async function capture(planned: PlannedBackOffice, orderid: string): Promise<void> {
  try {
    const reply = (await backOffice.capture({ client_orderid: planned.clientOrderId, orderid, amount: planned.amount, currency: "USD" })) as Record<string, unknown>
    send({ t: "back-office", client_orderid: planned.clientOrderId, orderid, amount: planned.amount, answer: "sent", serial: String(reply["serial-number"] ?? "") })
  } catch (error) {
    // A lost reply (the fleet's fault rules hit the back office too) or a refusal: the audit tells
    // a back-office capture by its amount, whatever its reply was.
    const code = (error as { errorCode?: unknown }).errorCode
    send({ t: "back-office", client_orderid: planned.clientOrderId, orderid, amount: planned.amount, answer: `${tagOf(error)}${typeof code === "string" ? `:${code}` : ""}` })
  }
}
const watch = setInterval(() => {
  for (const [coid, planned] of waiting) {
    const order = sim.orderByClientOrderId(coid)
    if (order === undefined || order.kind !== "preauth") continue
    const preauth = order.transactions.find((t) => t.type === "preauth")
    if (preauth === undefined || preauth.status === "processing") continue
    waiting.delete(coid)
    if (preauth.status !== "approved") continue
    setTimeout(() => void capture(planned, order.orderid), planned.delayMs)
  }
}, 20)
watch.unref()

// --- IPC ------------------------------------------------------------------------------------------------
process.on("message", (m: { t?: string; captures?: PlannedBackOffice[]; dir?: string }) => {
  if (m.t === "back-office") for (const c of m.captures ?? []) waiting.set(c.clientOrderId, c)
  else if (m.t === "orders") send({ t: "orders", kept: sim.orders(), forgotten: forgottenOrders })
  else if (m.t === "keep" && typeof m.dir === "string") {
    const write = (name: string, value: unknown) => writeFileSync(join(m.dir!, name), JSON.stringify(value, null, 1) + "\n")
    write("orders.json", sim.orders())
    write("forgotten-orders.json", forgottenOrders)
    write("callbacks.json", sim.callbackAttempts())
    write("forgotten-callbacks.json", forgottenCallbacks)
    write("snapshot.json", sim.snapshot())
    send({ t: "kept" })
  }
})
send({ t: "ready", url: server.url })
