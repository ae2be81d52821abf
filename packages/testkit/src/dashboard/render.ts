/**
 * The dashboard's HTML, rendered on the server from the same JSON views the test routes answer
 * (`OrderView`, `CallbackAttempt`, `RequestRecord`): a card shows as `CardView.masked` (BIN and
 * last four), never its expiry; no merchant key, control or signature is ever on the page.
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import { exponentOf } from "../auth/auth"
import { orderView } from "../state/orders"
import { esc } from "../http/html-escape"
import type { LoggedRequest } from "../http/request-log"
import type { CallbackAttempt } from "../callbacks/sender"
import type { OrderView } from "../state/views"
import { DASHBOARD_CSS, DASHBOARD_SCRIPT } from "./assets"

/** At most this many orders are rendered (newest first); the JSON route has them all. */
const ORDERS_SHOWN = 50
/** Request-log rows rendered and kept by the script. */
const LOG_ROWS = 100

const LEDGER: ReadonlyArray<readonly [keyof OrderView, string]> = [
  ["authorized", "Authorised"],
  ["captured", "Captured"],
  ["returned", "Refunded"],
  ["holdReleased", "Hold released"],
  ["inFlight", "In flight"],
  ["voided", "Voided"],
  ["chargedBack", "Charged back"],
  ["paidOut", "Paid out"]
]

const simTime = (ms: number): string => new Date(ms).toISOString().replace("T", " ").slice(0, 19)
const wallTime = (ms: number): string => new Date(ms).toISOString().slice(11, 23)

function badge(status: string): string {
  return `<span class="badge s-${esc(status.replace(/[^a-z-]/g, ""))}">${esc(status)}</span>`
}

/** The button of one action form; hidden fields first. */
function actionForm(action: string, label: string, hidden: Record<string, string> = {}, extra = "", cls = ""): string {
  const inputs = Object.entries(hidden).map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`).join("")
  return `<form method="post" action="/__sim/ui/action" class="act"><input type="hidden" name="action" value="${esc(action)}">${inputs}${extra}<button type="submit"${cls === "" ? "" : ` class="${cls}"`}>${label}</button></form>`
}

interface AttemptRow {
  readonly attempt: CallbackAttempt
  readonly index: number
  readonly redeliverable: boolean
  readonly type: string | undefined
}

function orderCard(order: OrderView, attempts: ReadonlyArray<AttemptRow>): string {
  const id = esc(order.orderid)
  const ledger = LEDGER.map(([key, label]) => `<div><dt>${label}</dt><dd>${esc(String(order[key]))}</dd></div>`).join("")
  const txRows = order.transactions
    .map((tx) => `<tr><td>${esc(tx.type)}</td><td>${badge(tx.status)}</td><td class="num">${esc(tx.amount ?? "")}</td><td>${simTime(tx.at)}</td></tr>`)
    .join("")
  const cbRows = attempts
    .map(({ attempt: a, index, redeliverable, type }) => {
      const answer = a.outcome === "error" ? `<span class="bad">failed</span> <span class="muted">${esc(a.error ?? "")}</span>` : a.outcome === 200 ? `<span class="good">HTTP 200</span>` : `<span class="bad">HTTP ${a.outcome}</span>`
      const button = redeliverable
        ? actionForm("redeliver", `Redeliver<span class="sr"> ${esc(type ?? "")} callback attempt ${a.attempt} (${esc(a.status)}) of order ${id}</span>`, { index: String(index), orderid: order.orderid }, "", "small")
        : `<span class="muted">restored</span>`
      return `<tr><td>${esc(type ?? "")}</td><td class="num">${a.attempt}</td><td>${badge(a.status)}</td><td>${simTime(a.at)}</td><td>${answer}</td><td>${button}</td></tr>`
    })
    .join("")
  const charged = order.transactions.some((tx) => tx.status === "approved" && (tx.type === "sale" || tx.type === "rebill" || tx.type === "capture"))
  const actions: string[] = []
  if (charged && !order.settled) actions.push(actionForm("settle", `Settle now<span class="sr"> order ${id}</span>`, { orderid: order.orderid }))
  if (order.settled && (order.kind === "sale" || order.kind === "rebill" || order.kind === "preauth")) {
    actions.push(
      actionForm(
        "chargeback",
        `Charge back<span class="sr"> order ${id}</span>`,
        { orderid: order.orderid },
        `<label for="cb-${id}">Amount <span class="muted">(empty: all)</span></label><input id="cb-${id}" name="amount" inputmode="decimal" size="8" autocomplete="off">`
      )
    )
  }
  const card = order.card === undefined ? "" : ` · <span class="card">${esc(order.card.brand)} ${esc(order.card.masked)}</span>`
  return `<article class="order" id="order-${id}" aria-labelledby="h-${id}">
<header><h3 id="h-${id}">Order ${id} ${badge(order.status)}</h3>
<p class="meta"><span>client_orderid <code>${esc(order.client_orderid)}</code></span> · <span>${esc(order.kind)}</span> · <strong>${esc(order.amount)} ${esc(order.currency)}</strong>${card}${order.threeDS === undefined ? "" : ` · 3DS ${esc(order.threeDS)}`} · ${order.settled ? "settled" : "not settled"}</p></header>
<dl class="ledger">${ledger}</dl>
<div class="scroll" role="region" aria-label="Transactions of order ${id}" tabindex="0"><table><caption>Transactions</caption><thead><tr><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Amount</th><th scope="col">At (simulator clock, UTC)</th></tr></thead><tbody>${txRows}</tbody></table></div>
${attempts.length === 0 ? `<p class="muted">No callback attempts${order.transactions.length > 0 ? " (no server_callback_url, or none final yet)" : ""}.</p>` : `<div class="scroll" role="region" aria-label="Callback attempts of order ${id}" tabindex="0"><table><caption>Callback attempts</caption><thead><tr><th scope="col">Type</th><th scope="col">Attempt</th><th scope="col">Status</th><th scope="col">At</th><th scope="col">Answer</th><th scope="col"><span class="sr">Action</span></th></tr></thead><tbody>${cbRows}</tbody></table></div>`}
${actions.length === 0 ? "" : `<div class="order-actions">${actions.join("")}</div>`}
</article>`
}

/** The orders section (also served alone for the script's refresh). */
export function ordersSection(engine: Engine): string {
  const all = engine.store.all()
  const shown = all.slice(-ORDERS_SHOWN).reverse()
  const attempts = engine.callbacks.attempts()
  const byOrder = new Map<string, AttemptRow[]>()
  attempts.forEach((attempt, index) => {
    const list = byOrder.get(attempt.orderid) ?? []
    list.push({ attempt, index, redeliverable: engine.callbacks.redeliverable(index), type: engine.callbacks.typeOf(index) })
    byOrder.set(attempt.orderid, list)
  })
  const cards = shown.map((order) => orderCard(orderView(order, exponentOf(order.currency)), byOrder.get(order.orderid) ?? [])).join("\n")
  return `<h2 id="orders-heading">Orders <span class="count">${all.length}</span></h2>
<p class="muted" id="clock">Simulator clock: <time datetime="${new Date(engine.clock.now()).toISOString()}">${simTime(engine.clock.now())} UTC</time>${all.length > ORDERS_SHOWN ? ` · showing the newest ${ORDERS_SHOWN}; GET /__sim/orders has all ${all.length}` : ""}</p>
${cards === "" ? `<p class="empty">No orders yet. Send a sale to this simulator (see the README's curl recipe) and it appears here.</p>` : cards}`
}

/** One row of the request log (the script builds the same from JSON). */
function requestRow(r: LoggedRequest): string {
  const cls = r.status === 0 || r.status >= 500 ? "bad" : r.status >= 400 ? "warn" : ""
  return `<tr data-seq="${r.seq}"><td>${wallTime(r.at)}</td><td class="op">${esc(/^[A-Z0-9_]+$/.test(r.operation) ? r.operation : `${r.method} ${r.path}`)}</td><td>${esc(r.clientOrderId ?? "")}</td><td class="${cls}">${r.status === 0 ? "reset" : r.status}</td><td>${esc(r.errorCode ?? "")}</td><td class="num">${r.ms}</td></tr>`
}

/** The whole page. */
export function dashboardPage(engine: Engine, note?: { text: string; ok: boolean }): string {
  const log = engine.requests.entries().slice(-LOG_ROWS).reverse()
  const pending = engine.faults.pendingDeclines
  const advance = (minutes: number, label: string) => actionForm("advance", label, { minutes: String(minutes) }, "", "small")
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>PayKit simulator dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>${DASHBOARD_CSS}</style></head>
<body>
<a class="skip" href="#orders">Skip to orders</a>
<header class="top"><p class="brand">PayKit simulator</p><p class="env">TEST ENVIRONMENT · no real money</p></header>
<main>
<h1>Sandbox dashboard</h1>
${note === undefined ? "" : `<p class="note ${note.ok ? "ok" : "fail"}" role="status">${esc(note.text)}</p>`}
<div class="layout">
<section aria-labelledby="actions-heading" class="panel actions"><h2 id="actions-heading">Actions</h2>
<h3>Clock</h3><div class="row">${advance(1, "+1 minute")}${advance(10, "+10 minutes")}${advance(1440, "+1 day")}${advance(43200, "+30 days")}</div>
${actionForm("advance", "Advance", {}, `<label for="minutes">Advance the clock by (minutes)</label><input id="minutes" name="minutes" inputmode="decimal" required size="6">`)}
<h3>Next events</h3>
${actionForm("fail-callback", "Fail the next callbacks", {}, `<label for="count">How many callback deliveries fail</label><input id="count" name="count" value="1" inputmode="numeric" size="4">`)}
${actionForm("decline-next", "Decline the next payment")}${pending > 0 ? `<p class="muted">${pending} decline${pending === 1 ? "" : "s"} queued.</p>` : ""}
<h3>Everything</h3>
${actionForm("reset", "Reset the simulator", {}, "", "danger")}
</section>
<section id="orders" aria-labelledby="orders-heading">${ordersSection(engine)}</section>
<section aria-labelledby="log-heading" class="panel log"><h2 id="log-heading">Requests <span class="muted small">live, newest first</span></h2>
<div class="scroll" role="region" aria-label="Request log" tabindex="0"><table id="log" data-last-seq="${engine.requests.lastSeq}"><caption class="sr">Recent requests</caption><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Operation</th><th scope="col">client_orderid</th><th scope="col">HTTP</th><th scope="col">Error code</th><th scope="col">ms</th></tr></thead>
<tbody>${log.map(requestRow).join("")}</tbody></table></div>
${log.length === 0 ? `<p class="muted" id="log-empty">No requests yet.</p>` : ""}
</section>
</div>
</main>
<script>${DASHBOARD_SCRIPT}</script>
</body></html>`
}
