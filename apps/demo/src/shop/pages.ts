/**
 * The shop's pages: plain server-rendered HTML with one small stylesheet.
 */
import type { ConfirmedCallback } from "@paykit/client"

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const STYLE = `
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f3ef;color:#222}
header{background:#2d2a26;color:#f5f3ef;padding:14px 32px;display:flex;justify-content:space-between;align-items:center}
header a{color:#f5f3ef;text-decoration:none;margin-left:18px}main{max-width:880px;margin:32px auto;padding:0 24px}
.card{background:#fff;border-radius:10px;box-shadow:0 1px 4px rgba(0,0,0,.08);padding:28px;margin-bottom:24px}
.product{display:grid;grid-template-columns:180px 1fr;gap:28px;align-items:center}
.art{width:180px;height:180px;border-radius:10px;background:linear-gradient(135deg,#6f4e37,#c69c6d);display:flex;align-items:center;justify-content:center;font-size:64px}
.price{font-size:28px;font-weight:700;margin:8px 0 18px}button,.button{background:#1f6f4a;color:#fff;border:0;border-radius:8px;padding:12px 22px;font-size:16px;cursor:pointer;text-decoration:none;display:inline-block}
.muted{color:#6b6660;font-size:14px}table{width:100%;border-collapse:collapse;font-size:14px}th,td{text-align:left;padding:8px;border-bottom:1px solid #eee}
.status{font-size:24px;font-weight:700}.approved{color:#1f6f4a}.declined,.error,.filtered{color:#a12b2b}.processing{color:#9a6b00}
code{background:#f0ede8;padding:1px 5px;border-radius:4px}`

const layout = (title: string, body: string, extraHead = ""): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · PayKit demo shop</title><style>${STYLE}</style>${extraHead}</head>
<body><header><strong>☕ PayKit Coffee</strong><nav><a href="/">Shop</a><a href="/callbacks">Callbacks</a></nav></header>
<main>${body}</main></body></html>`

/** The product and its buy button. */
export const productPage = (): string =>
  layout(
    "Shop",
    `<div class="card product"><div class="art">☕</div><div>
<h1>Single-origin beans, 1 kg</h1><p class="muted">Roasted this week. Paid through the gateway's hosted page, so card data never touches this shop.</p>
<div class="price">24.90 EUR</div>
<form method="post" action="/checkout"><button type="submit" id="buy">Buy now</button></form>
</div></div>
<div class="card"><h2>Test cards</h2><table><tr><th>card</th><th>outcome</th></tr>
<tr><td><code>4111 1111 1111 1111</code></td><td>approved</td></tr>
<tr><td><code>4000 0000 0000 0002</code></td><td>declined</td></tr>
<tr><td><code>4000 0000 0000 3220</code></td><td>3-D Secure challenge: pass → approved, fail → declined</td></tr>
</table><p class="muted">Any name, a future expiry (MM / YYYY) and any 3-digit CVV.</p></div>`
  )

/** The page the customer returns to, with the final status from awaitFinal. */
export const resultPage = (r: { status: string; orderid: string; client_orderid: string; amount?: string | undefined; currency?: string | undefined; card?: string | undefined }): string =>
  layout(
    "Order status",
    `<div class="card"><h1>Thank you</h1>
<p>Your order <code>${esc(r.client_orderid)}</code> (gateway order <code>${esc(r.orderid)}</code>)</p>
<p class="status ${esc(r.status)}" id="final-status">${esc(r.status)}</p>
${r.amount ? `<p>${esc(r.amount)} ${esc(r.currency ?? "")}${r.card ? ` · card ${esc(r.card)}` : ""}</p>` : ""}
<p class="muted">The status comes from <code>awaitFinal</code> (polling <code>status</code>) after the signed redirect was verified.</p>
<a class="button" href="/">Back to the shop</a></div>`
  )

/** A refusal, e.g. a forged return. */
export const errorPage = (message: string): string => layout("Error", `<div class="card"><h1>Something is wrong</h1><p id="error">${esc(message)}</p></div>`)

/** The live log of verified callbacks (refreshes itself from /callbacks.json). */
export const callbacksPage = (callbacks: ReadonlyArray<{ at: string; cb: ConfirmedCallback }>): string =>
  layout(
    "Callbacks",
    `<div class="card"><h1>Verified server callbacks</h1><p class="muted">Every callback is checked (control digest, constant-time) and deduplicated before it appears here. Updates live.</p>
<table><thead><tr><th>received</th><th>orderid</th><th>client_orderid</th><th>type</th><th>status</th><th>amount</th></tr></thead>
<tbody id="log">${callbackRows(callbacks)}</tbody></table></div>
<script>setInterval(async()=>{const r=await fetch("/callbacks.json");if(r.ok)document.getElementById("log").innerHTML=(await r.json()).rows},1000)</script>`
  )

/** Table rows of the callback log. */
export const callbackRows = (callbacks: ReadonlyArray<{ at: string; cb: ConfirmedCallback }>): string =>
  callbacks
    .slice()
    .reverse()
    .map(({ at, cb }) => `<tr><td>${esc(at)}</td><td>${esc(cb.orderid)}</td><td>${esc(cb.client_orderid)}</td><td>${esc(cb.type)}</td><td class="${esc(cb.status)}">${esc(cb.status)}</td><td>${esc(cb.amount)} ${esc(cb.currency ?? "")}</td></tr>`)
    .join("") || `<tr><td colspan="6" class="muted">none yet</td></tr>`
