/**
 * Redaction of free text that crosses a boundary (gateway error messages, Schema issues, reasons):
 * the client never puts card data into spans, logs or errors on purpose; this is the belt to that
 * pair of braces, for text a gateway might echo back.
 *
 * - PANs: every run of 12–19 digits (optionally split by spaces, dashes, dots or no-break spaces) that passes the
 *   Luhn check is masked to BIN + last four, also when glued to letters or underscores
 *   (`pan=4111…x`, `ccn_4111…`), which `\b` would not see.
 * - CVVs: a 3–4 digit value next to a card-security field name (`cvv2=123`, `"cvc": "1234"`,
 *   `security code 123`, `CVV code: 123`, URL-encoded `cvv2%3D123`) becomes `***`.
 *
 * @packageDocumentation
 */

/** Masks a PAN as BIN + `*` + last four (`411111******1111`); shorter strings become all `*`. */
export function maskPan(pan: string): string {
  if (pan.length < 12) return "*".repeat(pan.length)
  return pan.slice(0, 6) + "*".repeat(pan.length - 10) + pan.slice(-4)
}

/** The Luhn check over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

// Digit runs not preceded or followed by another digit (letters and underscores may touch them).
// Groups may be split by up to two spaces, dashes, dots or no-break spaces (`4111.1111.1111.1111`,
// `4111  1111 …`): a gateway echoes a PAN as the cardholder typed it.
const DIGIT_RUN = /(?<![0-9])[0-9](?:[ .\u00a0-]{0,2}[0-9]){11,}(?![0-9])/g
const RUN_SEPARATORS = /[ .\u00a0-]/g

function maskRun(run: string): string {
  const digits = run.replace(RUN_SEPARATORS, "")
  if (digits.length < 12) return run
  if (digits.length <= 19 && luhnValid(digits)) return maskPan(digits)
  // A longer run may hide a PAN inside it (`ref 00004111111111111111`): mask every Luhn-valid window.
  for (let len = 19; len >= 12; len--) {
    for (let start = 0; start + len <= digits.length; start++) {
      const window = digits.slice(start, start + len)
      if (luhnValid(window)) return maskRun(digits.slice(0, start)) + maskPan(window) + maskRun(digits.slice(start + len))
    }
  }
  return run
}

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

/** Masks PAN-shaped (Luhn-valid) digit runs and CVV-looking values inside free text. */
export function scrubText(text: string): string {
  return text.replace(DIGIT_RUN, maskRun).replace(CVV_LIKE, (_m, label: string) => `${label}***`)
}

/**
 * Free-text fields of a gateway reply (what a gateway writes in its own words, and may echo card data
 * into): scrubbed in place before a reply becomes a result, or a status snapshot on an error.
 */
export const GATEWAY_TEXT_FIELDS: ReadonlyArray<string> = ["error-message", "error-code", "descriptor", "cardholder-name", "order-stage"]

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
