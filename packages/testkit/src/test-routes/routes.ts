/**
 * Test-only routes (docs/decisions.md#simulator-process), for tests written in any language:
 *
 * - `POST /__sim/clock/advance?ms=N` → `{ now }` after everything due has run
 * - `GET /__sim/clock` → `{ now }`
 * - `POST /__sim/reset` → forgets every order, card ref, nonce, callback and fault
 * - `POST /__sim/faults` with a JSON rule (or an array of rules, or `{ "clear": true }`);
 *   `DELETE /__sim/faults` clears them
 * - `GET /__sim/orders/{orderid}` → the order and its transactions (card masked); `GET /__sim/orders`
 *   → every order
 * - `POST /__sim/orders/{orderid}/chargeback` (JSON `{ "amount": "5.00" }` optional) → charges a
 *   settled order back now (decision 17); a 4xx `{ error, code, reason }` names why not
 * - `POST /__sim/orders/{orderid}/settle` → settles an approved charge now instead of after the
 *   settlement delay (it can then be charged back, no longer voided); 409 when there is nothing to settle
 * - `GET /__sim/callbacks` → every callback delivery attempt and its answer
 * - `POST /__sim/callbacks/{index}/redeliver` → sends the callback of entry `index` of
 *   `GET /__sim/callbacks` again, byte for byte the same query, as one more attempt (not retried);
 *   answers that attempt
 * - `POST /__sim/decline-next` (JSON `{ "operation": "SALE", "merchant": "login", "count": 1 }`,
 *   each optional; an empty body declines the next payment of any kind) → the next matching
 *   payment (SALE, PREAUTH, REBILL, or a SALEFORM / PREAUTHFORM / PAYMENTFORM submission) is
 *   declined ("Do not honor", code 05) whatever its card or amount says
 * - `GET /__sim/ui` → the dashboard, when the simulator was created with `dashboard: true`
 *   (paykit-sim does); `GET /__sim/requests?after=N` → the request log (JSON)
 * - `GET /__sim/invariants` → every broken ledger invariant (`[]` when all money adds up)
 * - `POST /__sim/snapshot` → the simulator's snapshot (JSON), for `createSimulator({ restore })`
 *   or `paykit-sim --state FILE`
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import { exponentOf } from "../auth/auth"
import { orderView } from "../state/orders"
import { snapshotOf } from "../snapshot/snapshot"
import { SimError, plainJson, type SimReply, type SimRequest } from "../http/replies"
import type { FaultRule } from "../rules/faults"

const reply = plainJson

/** The JSON view of an order by id, or undefined. */
function viewOf(engine: Engine, orderid: string) {
  const order = engine.store.get(orderid)
  return order === undefined ? undefined : orderView(order, exponentOf(order.currency))
}

/** Handles a test route; undefined when the path is none. */
export async function handleTestRoute(engine: Engine, request: SimRequest, path: string, query: string): Promise<SimReply | undefined> {
  const method = request.method
  if (path === "/__sim/clock/advance" && method === "POST") {
    const ms = Number(new URLSearchParams(query).get("ms"))
    if (!Number.isFinite(ms) || ms < 0) return reply({ error: "ms must be a non-negative number" }, 400)
    await engine.clock.advance(ms)
    return reply({ now: engine.clock.now() })
  }
  if (path === "/__sim/clock" && method === "GET") return reply({ now: engine.clock.now() })
  if (path === "/__sim/reset" && method === "POST") {
    engine.reset()
    return reply({ ok: true })
  }
  if (path === "/__sim/faults") {
    if (method === "DELETE") {
      engine.faults.clear()
      return reply({ ok: true })
    }
    if (method !== "POST") return undefined
    let body: unknown
    try {
      body = JSON.parse(await request.text())
    } catch {
      return reply({ error: "body must be JSON" }, 400)
    }
    if (typeof body === "object" && body !== null && (body as { clear?: unknown }).clear === true) {
      engine.faults.clear()
      return reply({ ok: true })
    }
    const rules = (Array.isArray(body) ? body : [body]) as FaultRule[]
    try {
      for (const rule of rules) engine.faults.add(rule)
    } catch (error) {
      return reply({ error: error instanceof SimError ? error.message : "invalid rule" }, 400)
    }
    return reply({ ok: true, added: rules.length })
  }
  if (path === "/__sim/orders" && method === "GET") {
    return reply(engine.store.all().map((order) => orderView(order, exponentOf(order.currency))))
  }
  const chargeback = CHARGEBACK_PATH.exec(path)
  if (chargeback !== null && method === "POST") return chargebackRoute(engine, decodeURIComponent(chargeback[1]!), await request.text())
  if (path.startsWith("/__sim/orders/") && method === "GET") {
    const view = viewOf(engine, path.slice("/__sim/orders/".length))
    return view === undefined ? reply({ error: "order not found" }, 404) : reply(view)
  }
  if (path === "/__sim/callbacks" && method === "GET") return reply(engine.callbacks.attempts())
  const settle = SETTLE_PATH.exec(path)
  if (settle !== null && method === "POST") return settleRoute(engine, decodeURIComponent(settle[1]!))
  const redeliver = REDELIVER_PATH.exec(path)
  if (redeliver !== null && method === "POST") return redeliverRoute(engine, Number(redeliver[1]))
  if (path === "/__sim/decline-next" && method === "POST") return declineNextRoute(engine, await request.text())
  if (path === "/__sim/requests" && method === "GET") {
    const after = Number(new URLSearchParams(query).get("after") ?? "0")
    return reply(engine.requests.entries(Number.isFinite(after) ? after : 0))
  }
  if (path === "/__sim/invariants" && method === "GET") return reply(engine.checkAllInvariants())
  if (path === "/__sim/snapshot" && method === "POST") return reply(snapshotOf(engine))
  return undefined
}

const CHARGEBACK_PATH = /^\/__sim\/orders\/([^/]+)\/chargeback$/

/** `POST /__sim/orders/{orderid}/chargeback`: body empty or JSON `{ "amount": "<major units>" }`. */
function chargebackRoute(engine: Engine, orderid: string, body: string): SimReply {
  const order = engine.store.get(orderid)
  if (order === undefined) return reply({ error: `orderid: no order ${orderid}`, code: "order-not-found" }, 404)
  let amountText: unknown
  if (body.trim() !== "") {
    let parsed: unknown
    try {
      parsed = JSON.parse(body)
    } catch {
      return reply({ error: "body must be empty or JSON { \"amount\": \"5.00\" }", code: "invalid-field" }, 400)
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return reply({ error: "body must be a JSON object", code: "invalid-field" }, 400)
    amountText = (parsed as { amount?: unknown }).amount
  }
  let amount: bigint | undefined
  if (amountText !== undefined) {
    if (typeof amountText !== "string") return reply({ error: "amount: must be a decimal string in major units, e.g. \"5.00\"", code: "invalid-amount" }, 400)
    try {
      amount = engine.minor(amountText, order.currency)
    } catch (error) {
      return reply({ error: error instanceof SimError ? error.message : "amount: invalid", code: "invalid-amount" }, 400)
    }
  }
  const result = engine.chargeback(order, amount)
  if (!result.ok) return reply({ error: result.message, code: "chargeback-not-allowed", reason: result.reason }, result.reason === "exceeds-refundable" ? 400 : 409)
  return reply({ orderid: order.orderid, amount: engine.format(result.tx.amount ?? 0n, order.currency), currency: order.currency, order: viewOf(engine, order.orderid) })
}

const SETTLE_PATH = /^\/__sim\/orders\/([^/]+)\/settle$/
const REDELIVER_PATH = /^\/__sim\/callbacks\/([0-9]{1,9})\/redeliver$/

/** `POST /__sim/orders/{orderid}/settle`: what the settlement delay would do, now. */
function settleRoute(engine: Engine, orderid: string): SimReply {
  const order = engine.store.get(orderid)
  if (order === undefined) return reply({ error: `orderid: no order ${orderid}`, code: "order-not-found" }, 404)
  const charged = order.transactions.some((tx) => tx.status === "approved" && (tx.type === "sale" || tx.type === "rebill" || tx.type === "capture"))
  if (!charged) return reply({ error: "orderid: nothing to settle: the order has no approved sale, rebill or capture", code: "settle-not-allowed" }, 409)
  if (order.ledger.settled) return reply({ error: "orderid: the order is already settled", code: "settle-not-allowed" }, 409)
  engine.runJob({ kind: "settle", orderid }, engine.clock.now())
  return reply({ orderid, settled: true, order: viewOf(engine, orderid) })
}

/** `POST /__sim/callbacks/{index}/redeliver`. */
async function redeliverRoute(engine: Engine, index: number): Promise<SimReply> {
  const attempts = engine.callbacks.attempts()
  if (index >= attempts.length) return reply({ error: `index: no callback attempt ${index} (there are ${attempts.length})`, code: "callback-not-found" }, 404)
  const sending = engine.callbacks.redeliver(index)
  if (sending === undefined) return reply({ error: "index: this callback was logged before a restore; its fields are not kept, so it cannot be sent again", code: "callback-not-redeliverable" }, 409)
  return reply(await sending)
}

/** `POST /__sim/decline-next`: body empty or JSON `{ operation?, merchant?, count? }`. */
function declineNextRoute(engine: Engine, body: string): SimReply {
  let rule: Record<string, unknown> = {}
  if (body.trim() !== "") {
    try {
      rule = JSON.parse(body) as Record<string, unknown>
    } catch {
      return reply({ error: "body must be empty or JSON { \"operation\": \"SALE\", \"merchant\": \"login\", \"count\": 1 }", code: "invalid-field" }, 400)
    }
    if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return reply({ error: "body must be a JSON object", code: "invalid-field" }, 400)
  }
  const { operation, merchant, count } = rule
  if (operation !== undefined && typeof operation !== "string") return reply({ error: "operation: must be an operation id such as SALE", code: "invalid-field" }, 400)
  if (merchant !== undefined && (typeof merchant !== "string" || engine.merchantByLogin(merchant) === undefined)) return reply({ error: "merchant: not the login of a merchant this simulator serves", code: "invalid-field" }, 400)
  if (count !== undefined && typeof count !== "number") return reply({ error: "count: must be a positive integer", code: "invalid-field" }, 400)
  try {
    engine.faults.declineNext({ ...(operation === undefined ? {} : { operation }), ...(merchant === undefined ? {} : { merchant }), ...(count === undefined ? {} : { count }) })
  } catch (error) {
    return reply({ error: error instanceof SimError ? error.message : "invalid rule", code: "invalid-field" }, 400)
  }
  return reply({ ok: true, operation: operation ?? "*", merchant: merchant ?? "*", count: count ?? 1, pending: engine.faults.pendingDeclines })
}
