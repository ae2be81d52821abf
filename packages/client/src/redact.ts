/**
 * PAN masking. The client never puts card data into spans, logs or errors on purpose; these helpers
 * are the belt to that pair of braces, for any free text that crosses a boundary (gateway error
 * messages, Schema issues) and might echo a value back.
 *
 * @packageDocumentation
 */

/** Masks a PAN as BIN + `*` + last four (`411111******1111`); shorter strings become all `*`. */
export function maskPan(pan: string): string {
  if (pan.length < 12) return "*".repeat(pan.length)
  return pan.slice(0, 6) + "*".repeat(pan.length - 10) + pan.slice(-4)
}

// Runs of 12–19 digits (optionally split by spaces or dashes) look like PANs.
const PAN_LIKE = /\b(?:\d[ -]?){11,18}\d\b/g

/** Masks anything PAN-shaped inside free text. */
export function scrubText(text: string): string {
  return text.replace(PAN_LIKE, (m) => maskPan(m.replace(/[ -]/g, "")))
}

/** Wire names of fields that must never appear in telemetry, errors or logs. */
export const sensitiveFields: ReadonlySet<string> = new Set([
  "credit_card_number",
  "credit-card-number",
  "destination-card-no",
  "sending-card-number",
  "cvv2",
  "account_number",
  "cRes",
  "paRes",
  "control"
])
