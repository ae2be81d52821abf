/**
 * Compares what the simulator shows with what the reference model predicts: the orders and their
 * transactions (type, amount, status, time), settlement, and the ledger fields. Where decision 10
 * leaves a convention open, both readings are accepted (each named below); for an order the model
 * marked fuzzy only the structure and the invariants are checked.
 */
import type { OrderJson } from "./harness"
import { invariantViolations, ledgerOf } from "./invariants"
import { cents, major } from "./money"
import type { Model, ModelOrder } from "./reference"

/** Every difference between the model and the views, plus every invariant the views break. */
export function compareViews(model: Model, views: ReadonlyArray<OrderJson>): string[] {
  const out: string[] = []
  for (const view of views) out.push(...invariantViolations(view))
  const byId = new Map(views.map((v) => [v.orderid, v]))
  if (views.length !== model.orders.length) out.push(`the simulator shows ${views.length} orders, the model knows ${model.orders.length}`)
  for (const order of model.orders) {
    const view = byId.get(order.orderid)
    if (view === undefined) out.push(`order #${order.index} (${order.orderid}) is missing from /__sim/orders`)
    else out.push(...compareOrder(model, order, view))
  }
  return out
}

function compareOrder(model: Model, order: ModelOrder, view: OrderJson): string[] {
  const out: string[] = []
  const fail = (text: string) => void out.push(`order #${order.index} (${order.orderid}, ${order.kind} ${major(order.amount)}): ${text}`)
  if (view.kind !== order.kind) fail(`kind ${view.kind}`)
  if (cents(view.amount) !== order.amount) fail(`amount ${view.amount}`)
  const txs = view.transactions
  if (txs.length !== order.txs.length) {
    fail(`${txs.length} transactions [${txs.map((t) => `${t.type} ${t.amount ?? ""} ${t.status}`).join(", ")}], the model expects ${order.txs.length} [${order.txs.map((t) => `${t.type} ${major(t.amount)} ${model.statusOf(t)}`).join(", ")}]`)
    return out
  }
  order.txs.forEach((tx, i) => {
    const seen = txs[i]!
    const status = model.statusOf(tx)
    if (seen.type !== tx.type) fail(`transaction ${i} is a ${seen.type}, expected ${tx.type}`)
    if (seen.status !== status) fail(`transaction ${i} (${tx.type}) is ${seen.status}, expected ${status} (accepted at +${tx.acceptedAt - model.startTime} ms, now +${model.now - model.startTime} ms)`)
    if (seen.at !== tx.acceptedAt) fail(`transaction ${i} (${tx.type}) at +${seen.at - model.startTime} ms, expected +${tx.acceptedAt - model.startTime} ms`)
    if (order.fuzzy === undefined && tx.type !== "void" && (seen.amount === undefined || cents(seen.amount) !== tx.amount)) fail(`transaction ${i} (${tx.type}) amount ${seen.amount}, expected ${major(tx.amount)}`)
  })
  if (order.txs.length === 1 && view.status !== model.statusOf(order.txs[0]!)) fail(`status ${view.status}, expected ${model.statusOf(order.txs[0]!)}`)
  if (order.fuzzy !== undefined) return out
  const m = model.money(order)
  if (view.settled !== undefined && view.settled !== m.settled) fail(`settled ${view.settled}, expected ${m.settled}`)
  let ledger: ReturnType<typeof ledgerOf>
  try {
    ledger = ledgerOf(view)
  } catch (error) {
    fail((error as Error).message)
    return out
  }
  const expect = (name: string, seen: bigint, allowed: ReadonlyArray<bigint>, why = "") => {
    if (!allowed.includes(seen)) fail(`${name} ${major(seen)}, expected ${allowed.map(major).join(" or ")}${why}`)
  }
  expect("authorized", ledger.authorized, [m.authorized])
  // A sale is authorised and captured at once: its `captured` may show the sale (ledger reading)
  // or only captures (there are none on a sale).
  expect("captured", ledger.captured, order.kind === "sale" ? [m.capturedApproved, m.authorized] : [m.capturedApproved])
  expect("returned", ledger.returned, [m.refundedApproved])
  // An approved void of a preauth may show what it let go of as hold released, or not.
  expect("holdReleased", ledger.holdReleased, order.kind === "preauth" && m.voidApproved ? [m.releasedApproved, m.releasedApproved + m.voidReleases] : [m.releasedApproved])
  // A void in flight may count what it will reverse as in flight, or count nothing.
  expect("inFlight", ledger.inFlight, [m.inFlight, m.inFlight + m.voidInFlight])
  return out
}
