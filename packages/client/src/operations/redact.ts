/**
 * Redaction of free text that crosses a boundary (gateway error messages, Schema issues, reasons):
 * the client never puts card data into spans, logs or errors on purpose; this is the belt to that
 * pair of braces, for text a gateway might echo back.
 *
 * - PANs: every run of 12–19 digits (optionally split by spaces, dashes, dots or no-break spaces) that passes the
 *   Luhn check is masked by `maskPans` of `@paykit/contracts/card-data` (BIN + last four), also
 *   when glued to letters or underscores (`pan=4111…x`, `ccn_4111…`), which `\b` would not see.
 * - CVVs: a 3–4 digit value next to a card-security field name (`cvv2=123`, `"cvc": "1234"`,
 *   `security code 123`, `CVV code: 123`, URL-encoded `cvv2%3D123`) becomes `***`.
 *
 * @packageDocumentation
 */

import { isUuid, maskPans } from "@paykit/contracts/card-data"

export { luhnValid, maskPan } from "@paykit/contracts/card-data"

// A card-security field name, maybe a qualifier word (`CVV code`, `CVC number`, `cvv_code`), a
// separator (`=`, `:`, quotes, spaces), then 3–4 digits. The separator also takes the arrows of
// echoed PHP/JSON-ish dumps (`'cvv' => '123'`, `cvv -> 123`) and the URL encoding of an echoed
// request body (`cvv2%3D123`, `cvv2+%3D+123`, `%22123%22`).
const CVV_LABEL = "(?:cvv2?|cvc2?|cvn|cid|csc|card[ _-]?security[ _-]?code|security[ _-]?code|card[ _-]?verification(?:[ _-]?value)?)"
const CVV_QUALIFIER = "(?:[ _-]?(?:code|number|num|no\\.?|value|val))?"
const CVV_QUOTE = "(?:[\"']|%2[27])?"
const CVV_SPACE = "(?:\\s|\\+|%20)*"
const CVV_SEPARATOR = "(?:=>|->|=|:|%3[da]|\\bis\\b)?"
const CVV_LIKE = new RegExp(`(${CVV_LABEL}${CVV_QUALIFIER}${CVV_QUOTE}${CVV_SPACE}${CVV_SEPARATOR}${CVV_SPACE}${CVV_QUOTE})([0-9]{3,4})(?![0-9])`, "gi")

/**
 * Masks PAN-shaped (Luhn-valid) digit runs and CVV-looking values inside free text. A text that is
 * one UUID (a reply's `serial-number`, scrubbed on every reply) holds neither and is returned as it is.
 */
export function scrubText(text: string): string {
  if (isUuid(text)) return text
  return maskPans(text).replace(CVV_LIKE, (_m, label: string) => `${label}***`)
}

/**
 * Free-text fields of a gateway reply (what a gateway writes in its own words, and may echo card data
 * into): scrubbed in place before a reply becomes a result, or a status snapshot on an error.
 */
const GATEWAY_TEXT_FIELDS: ReadonlyArray<string> = ["error-message", "error-code", "descriptor", "cardholder-name", "order-stage"]

// Only text with a run of three digits can hold a PAN or a CVV: the common reply is left untouched.
const HAS_DIGITS = /[0-9]{3}/

/** Scrubs the gateway's free-text fields of a decoded reply in place (see {@link GATEWAY_TEXT_FIELDS}). */
export function scrubReplyTexts(reply: Record<string, unknown>): Record<string, unknown> {
  for (const field of GATEWAY_TEXT_FIELDS) {
    const value = reply[field]
    if (typeof value === "string" && HAS_DIGITS.test(value)) reply[field] = scrubText(value)
  }
  return reply
}

/** Wire names of fields that must never appear in telemetry, errors or logs. */
export const sensitiveFields: ReadonlySet<string> = new Set([
  "credit_card_number",
  "credit-card-number",
  "destination-card-no",
  "sending-card-number",
  "cvv2",
  "account_number",
  // A wallet payout's receiver account (docs/decisions.md#d16w-wallet-and-stored-card-payouts) is as private as a bank account number.
  "wallet_id",
  "cRes",
  "paRes",
  "control"
])
