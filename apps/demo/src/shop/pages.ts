/**
 * The shop's pages: plain server-rendered HTML with one small stylesheet that stacks on a phone.
 * The result page says what happened: its heading, text and links follow the outcome.
 */
import type { ConfirmedCallback } from "@paykit/client"
import type { ShopOutcome } from "./outcome"

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f3ef;color:#222}
header{background:#2d2a26;color:#f5f3ef;padding:14px 32px;display:flex;flex-wrap:wrap;gap:8px 18px;justify-content:space-between;align-items:center}
header a{color:#f5f3ef;text-decoration:none;margin-left:18px}header a:hover,header a:focus{text-decoration:underline}
main{max-width:880px;margin:32px auto;padding:0 24px}
h1,h2{line-height:1.25;overflow-wrap:anywhere}h1{margin:0 0 12px}
.card{background:#fff;border-radius:10px;box-shadow:0 1px 4px rgba(0,0,0,.08);padding:28px;margin-bottom:24px}
.product{display:grid;grid-template-columns:180px minmax(0,1fr);gap:28px;align-items:center}
.art{width:180px;height:180px;border-radius:10px;background:linear-gradient(135deg,#6f4e37,#c69c6d);display:flex;align-items:center;justify-content:center;font-size:64px}
.price{font-size:28px;font-weight:700;margin:8px 0 18px}
button,.button{background:#1f6f4a;color:#fff;border:0;border-radius:8px;padding:12px 22px;font-size:16px;cursor:pointer;text-decoration:none;display:inline-block;margin:4px 8px 4px 0}
.button.secondary{background:#fff;color:#1f6f4a;box-shadow:inset 0 0 0 2px #1f6f4a}
.muted{color:#5f5a54;font-size:14px}.table-wrap{overflow-x:auto}table{width:100%;border-collapse:collapse;font-size:14px}th,td{text-align:left;padding:8px;border-bottom:1px solid #eee}
.status{font-size:20px;font-weight:700}.approved{color:#1a6342}.declined,.error,.filtered{color:#a12b2b}.processing,.unknown{color:#7a5500}
.outcome{border-left:6px solid #1a6342}.outcome-declined,.outcome-failed{border-left-color:#a12b2b}.outcome-pending{border-left-color:#7a5500}
.outcome h1{color:#1a6342}.outcome-declined h1,.outcome-failed h1{color:#a12b2b}.outcome-pending h1{color:#5c4000}
.reason{background:#fbeaea;border-radius:6px;padding:10px 14px}
code{background:#f0ede8;padding:1px 5px;border-radius:4px;overflow-wrap:anywhere}td code{white-space:nowrap}
@media (max-width:600px){
header{padding:12px 16px}header a{margin-left:0;margin-right:14px}main{margin:16px auto;padding:0 12px}.card{padding:18px}
.product{grid-template-columns:1fr;gap:16px}.art{width:100%;height:140px}h1{font-size:26px}
.stack thead{position:absolute;width:1px;height:1px;overflow:hidden;clip-path:inset(50%)}
.stack tr{display:block;border-bottom:1px solid #eee;padding:6px 0}.stack td{display:flex;justify-content:space-between;gap:12px;border:0;padding:2px 8px}
.stack td::before{content:attr(data-label);font-weight:600;color:#5f5a54}
}`

const layout = (title: string, body: string, extraHead = ""): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · PayKit demo shop</title><style>${STYLE}</style>${extraHead}</head>
<body><header><strong>☕ PayKit Coffee</strong><nav aria-label="Shop"><a href="/">Shop</a><a href="/callbacks">Callbacks</a></nav></header>
<main>${body}</main></body></html>`

/** The product and its buy button. */
export const productPage = (): string =>
  layout(
    "Shop",
    `<div class="card product"><div class="art" role="img" aria-label="A bag of coffee beans">☕</div><div>
<h1>Single-origin beans, 1 kg</h1><p class="muted">Roasted this week. Paid through the gateway's hosted page, so card data never touches this shop.</p>
<div class="price">24.90 EUR</div>
<form method="post" action="/checkout"><button type="submit" id="buy">Buy now</button></form>
</div></div>
<div class="card"><h2>Test cards</h2><div class="table-wrap"><table><thead><tr><th scope="col">card</th><th scope="col">outcome</th></tr></thead><tbody>
<tr><td><code>4111 1111 1111 1111</code></td><td>approved</td></tr>
<tr><td><code>4000 0000 0000 0002</code></td><td>declined (Do not honor)</td></tr>
<tr><td><code>4000 0000 0000 9995</code></td><td>declined (Insufficient funds)</td></tr>
<tr><td><code>4000 0000 0000 3220</code></td><td>3-D Secure challenge: pass → approved, fail → declined</td></tr>
</tbody></table></div><p class="muted">Any name, a future expiry (MM / YYYY) and any 3-digit CVV.</p></div>`
  )

const HEADINGS: Readonly<Record<ShopOutcome["kind"], string>> = {
  approved: "Payment approved",
  declined: "Payment declined",
  failed: "Payment failed",
  pending: "Payment pending"
}

/** The page the customer returns to: heading, text and links follow the outcome. */
export const resultPage = (o: ShopOutcome): string => {
  const heading = HEADINGS[o.kind]
  const money = o.amount ? `${esc(o.amount)} ${esc(o.currency ?? "")}${o.card ? `, card ${esc(o.card)}` : ""}` : ""
  const reason = o.reason
    ? `<p class="reason" id="reason">${o.kind === "declined" ? "The gateway's reason" : "Reason"}: <strong>${esc(o.reason)}</strong>${o.code ? ` (code ${esc(o.code)})` : ""}</p>`
    : ""
  const checkAgain = `/order?${new URLSearchParams({ client_orderid: o.client_orderid, orderid: o.orderid })}`
  const text: Record<ShopOutcome["kind"], string> = {
    approved: `<p>Thank you: your order is paid${money ? ` (${money})` : ""}. We will roast your beans this week.</p>`,
    declined: `<p>Your payment${money ? ` of ${money}` : ""} was declined, so no money was taken.</p>${reason}<p>You can try again, with another card if the reason is about this one.</p>`,
    failed: `<p>The payment could not be completed${money ? ` (${money})` : ""}; no money was taken.</p>${reason}<p>Please try again in a moment.</p>`,
    pending: `<p>The gateway has not given its final answer yet (status <code>${esc(o.status)}</code>). Nothing is lost: check again in a moment.</p>`
  }
  const links: Record<ShopOutcome["kind"], string> = {
    approved: `<a class="button" href="/">Back to the shop</a>`,
    declined: `<a class="button" id="retry" href="/">Try again</a><a class="button secondary" href="/callbacks">See the callbacks</a>`,
    failed: `<a class="button" id="retry" href="/">Try again</a>`,
    pending: `<a class="button" id="retry" href="${esc(checkAgain)}">Check again</a><a class="button secondary" href="/">Back to the shop</a>`
  }
  return layout(
    heading,
    `<div class="card outcome outcome-${o.kind}"><h1 id="result-heading">${heading}</h1>
${text[o.kind]}
<p>Order <code id="client-orderid">${esc(o.client_orderid)}</code> · gateway order <code id="orderid">${esc(o.orderid)}</code> · status <span class="status ${esc(o.status)}" id="final-status">${esc(o.status)}</span></p>
<p class="muted">The status comes from the gateway (<code>status</code>, polled by <code>awaitFinal</code>) after the signed redirect was verified.</p>
${links[o.kind]}</div>`
  )
}

/** A refusal, e.g. a forged return. */
export const errorPage = (message: string): string =>
  layout("Error", `<div class="card"><h1>Something is wrong</h1><p id="error">${esc(message)}</p><a class="button" href="/">Back to the shop</a></div>`)

/** The live log of verified callbacks (refreshes itself from /callbacks.json). */
export const callbacksPage = (callbacks: ReadonlyArray<{ at: string; cb: ConfirmedCallback }>): string =>
  layout(
    "Callbacks",
    `<div class="card"><h1>Verified server callbacks</h1><p class="muted">Every callback is checked (control digest, constant-time) and deduplicated before it appears here. Updates live.</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Callback log"><table class="stack"><thead><tr><th scope="col">received</th><th scope="col">orderid</th><th scope="col">client_orderid</th><th scope="col">type</th><th scope="col">status</th><th scope="col">amount</th></tr></thead>
<tbody id="log">${callbackRows(callbacks)}</tbody></table></div></div>
<script>setInterval(async()=>{const r=await fetch("/callbacks.json");if(r.ok)document.getElementById("log").innerHTML=(await r.json()).rows},1000)</script>`
  )

/** Table rows of the callback log. */
export const callbackRows = (callbacks: ReadonlyArray<{ at: string; cb: ConfirmedCallback }>): string =>
  callbacks
    .slice()
    .reverse()
    // data-label: on a phone each row stacks as "label value" lines instead of scrolling sideways.
    .map(({ at, cb }) => `<tr><td data-label="received">${esc(at)}</td><td data-label="orderid">${esc(cb.orderid)}</td><td data-label="client_orderid">${esc(cb.client_orderid)}</td><td data-label="type">${esc(cb.type)}</td><td data-label="status" class="${esc(cb.status)}">${esc(cb.status)}</td><td data-label="amount">${esc(cb.amount)} ${esc(cb.currency ?? "")}</td></tr>`)
    .join("") || `<tr><td colspan="6" class="muted">none yet</td></tr>`
