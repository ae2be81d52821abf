/**
 * Minimal HTML helpers for the simulator's pages: plain forms, no scripts except the final
 * redirect's auto-submit, so every page works with plain HTTP clients and with browsers.
 *
 * @packageDocumentation
 */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }
const ESCAPE_RE = /[&<>"']/g

/** Escapes text for HTML bodies and attribute values. */
export function esc(text: string): string {
  return text.replace(ESCAPE_RE, (c) => ESCAPES[c]!)
}

/** A complete page. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;padding:0 1rem}
label{display:block;margin:.6rem 0 .2rem}input{width:100%;padding:.4rem;box-sizing:border-box}
.error{color:#b00020}.note{color:#555;font-size:.9rem}button{margin:.8rem .4rem 0 0;padding:.5rem 1rem}</style>
</head><body>
<p class="note">PayKit simulator (test environment, no real money)</p>
<h1>${esc(title)}</h1>
${body}
</body></html>`
}

/** Hidden inputs for every field. */
export function hiddenInputs(fields: Readonly<Record<string, string>>): string {
  return Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`)
    .join("\n")
}
