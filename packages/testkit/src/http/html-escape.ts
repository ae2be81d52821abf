/**
 * Escaping text for HTML: every page the simulator and its proxy serve (hosted pages, dashboard,
 * exchange log) writes request-derived text only through {@link esc}.
 *
 * @packageDocumentation
 */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }
const ESCAPE_RE = /[&<>"']/g

/** Escapes text for HTML bodies and attribute values. */
export function esc(text: string): string {
  return text.replace(ESCAPE_RE, (c) => ESCAPES[c]!)
}
