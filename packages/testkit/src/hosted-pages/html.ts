/**
 * HTML helpers for the simulator's customer-facing pages (hosted payment form, 3-D Secure check,
 * final redirect): one page shell styled like a gateway's checkout, the test environment marked on
 * every page. Pages stay plain forms that work without scripts; a script only adds comfort (card
 * grouping, brand detection, inline checks) and the final redirect's auto-submit.
 *
 * @packageDocumentation
 */

import { esc } from "../http/html-escape"

const CSS = `*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a2233;background:#eef1f6}
.test-banner{margin:0;background:#ffd54a;color:#2b2100;text-align:center;font-size:14px;font-weight:700;padding:6px 12px}
.shell{max-width:30rem;margin:0 auto;padding:16px 16px 24px}
.brandbar{display:flex;align-items:center;justify-content:space-between;gap:12px;padding-bottom:0}
.logo{margin:0;font-weight:800;font-size:18px;letter-spacing:.01em;color:#1d2b4f}
.logo span{color:#2f55c4}
.secure{margin:0;font-size:13px;color:#3d4656;display:flex;align-items:center;gap:6px}
.secure svg{flex:none}
.panel{background:#fff;border:1px solid #d5dbe5;border-radius:12px;padding:20px;box-shadow:0 1px 2px rgba(16,24,40,.06)}
h1{font-size:21px;margin:0 0 4px}
.summary{display:flex;justify-content:space-between;align-items:baseline;gap:12px;flex-wrap:wrap;margin:0 0 18px;padding:0 0 14px;border-bottom:1px solid #e4e8ef}
.summary p{margin:0}.amount{font-size:22px;font-weight:700;font-variant-numeric:tabular-nums}
.muted{color:#4f596b;font-size:14px}
.field{margin:0 0 14px}
label,legend{display:block;font-weight:600;font-size:14px;margin:0 0 4px;color:#1a2233}
.hint{font-weight:400;color:#4f596b}
input{width:100%;font:inherit;padding:10px 12px;border:1px solid #8792a6;border-radius:8px;background:#fff;color:#1a2233}
input:focus{outline:3px solid #9bb5f5;outline-offset:0;border-color:#2f55c4}
input[aria-invalid=true]{border-color:#b3261e;background:#fff8f7}
.pan{position:relative}.pan input{padding-right:6.5rem;font-variant-numeric:tabular-nums}
.card-brand{position:absolute;right:8px;top:50%;transform:translateY(-50%);font-size:12px;font-weight:800;letter-spacing:.04em;padding:2px 8px;border-radius:4px;background:#e8ebf1;color:#2d3648}
.card-brand[data-brand=VISA]{background:#1a1f71;color:#fff}.card-brand[data-brand=MASTERCARD]{background:#2b2b2b;color:#ffb547}
.card-brand[data-brand=AMEX]{background:#1f6fb8;color:#fff}.card-brand[data-brand=DISCOVER]{background:#8a3a00;color:#fff}
.row{display:grid;grid-template-columns:repeat(auto-fit,minmax(7rem,1fr));gap:0 10px}
.row .field{min-width:0}.row .hint{display:block}
fieldset{border:0;padding:0;margin:0 0 14px;min-width:0}
.error{color:#a01616;font-size:14px;margin:4px 0 0;font-weight:600}
.error-summary{border:2px solid #b3261e;border-radius:8px;padding:10px 12px;margin:0 0 16px;background:#fff8f7}
.error-summary h2{font-size:16px;margin:0 0 4px;color:#8a1717}.error-summary ul{margin:0;padding-left:18px}
.error-summary a{color:#8a1717}
button{width:100%;font:inherit;font-weight:700;font-size:17px;padding:12px 16px;border-radius:8px;border:1px solid #2547a8;background:#2f55c4;color:#fff;cursor:pointer;margin:6px 0 0}
button:hover{background:#2547a8}button:focus-visible{outline:3px solid #f5b400;outline-offset:2px}
button.secondary{background:#fff;color:#8a1717;border-color:#b3261e}button.secondary:hover{background:#fff1f0}
.choices{display:grid;gap:10px;margin:16px 0 0}
.choices form{margin:0}
.test-note{margin:16px 0 0;padding:10px 12px;border-radius:8px;background:#fff6d6;color:#4a3800;font-size:14px}
.test-note code{font-size:13px;white-space:nowrap}
.result{font-size:18px}
.foot{margin:0 16px 32px;text-align:center;color:#4f596b;font-size:13px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (min-width:700px){.brandbar{padding-top:32px}}`

const LOCK = `<svg width="14" height="14" viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="#3d4656" d="M12 2a5 5 0 0 0-5 5v3H6a2 2 0 0 0-2 2v8a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-8a2 2 0 0 0-2-2h-1V7a5 5 0 0 0-5-5Zm-3 8V7a3 3 0 0 1 6 0v3H9Z"/></svg>`

/** Options of {@link page}. */
interface PageOptions {
  /** The amount line under the title (already escaped HTML). */
  readonly summary?: string
  /** A script for the page (trusted: built here, never from request data). */
  readonly script?: string
}

/** A complete page: the test banner, the gateway's header, a panel with the title and body. */
export function page(title: string, body: string, options: PageOptions = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · PayKit simulator (test)</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<style>${CSS}</style>
</head><body>
<header>
<p class="test-banner">TEST ENVIRONMENT · PayKit simulator · no real money moves</p>
<div class="shell brandbar"><p class="logo">Pay<span>Kit</span> checkout</p><p class="secure">${LOCK}Secure payment page</p></div>
</header>
<div class="shell">
<main class="panel">
<h1>${esc(title)}</h1>
${options.summary ?? ""}
${body}
</main>
</div>
<footer class="foot">A PayKit simulator page: use the test cards from the testkit README.</footer>
${options.script === undefined ? "" : `<script>${options.script}</script>`}
</body></html>`
}

/** Hidden inputs for every field. */
export function hiddenInputs(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join("\n")
}
