/**
 * The store's own guard against keeping card data or secrets. Whatever the caller hands over, an
 * outcome's JSON loses every field whose name is a card, CVV, key or digest field, and every
 * PAN-shaped digit run (Luhn-valid, 12–19 digits, even glued to letters or underscores) is masked
 * to BIN + last four. It is deliberately independent of the pipeline's redaction: it is the last
 * step before durable storage, and a miss there would be written to disk and to backups.
 *
 * @packageDocumentation
 */
import type { JsonValue } from "./types"

// Field names never stored, compared with `_`/`-` removed and lower-cased.
const DROPPED = new Set([
  "creditcardnumber",
  "cardnumber",
  "cardno",
  "pan",
  "destinationcardno",
  "sendingcardnumber",
  "accountnumber",
  "cvv",
  "cvv2",
  "cvc",
  "cvc2",
  "control",
  "controlkey",
  "privatekey",
  "privatekeypem",
  "password",
  "authorization",
  "oauthsignature",
  "pares",
  "cres",
  "expiremonth",
  "expireyear"
])

// Replies use a few dozen field names over and over: each is judged once (a bounded memo, so a
// caller's own names cannot grow it without end).
const judged = new Map<string, boolean>()

/** Whether a field of this name is never stored. */
export function isDroppedField(name: string): boolean {
  let dropped = judged.get(name)
  if (dropped === undefined) {
    dropped = DROPPED.has(name.replace(/[_-]/g, "").toLowerCase())
    if (judged.size < 1024) judged.set(name, dropped)
  }
  return dropped
}

function luhn(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return sum % 10 === 0
}

function hasDigitRun(text: string): boolean {
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    run = c >= 48 && c <= 57 ? run + 1 : 0
    if (run === 12) return true
  }
  return false
}

// A digit run not touching other digits (letters and underscores around it are allowed, unlike \b).
const DIGIT_RUN = /(?<!\d)\d{12,19}(?!\d)/g

/** Masks every Luhn-valid 12–19 digit run to BIN + `*` + last four. */
export function maskPans(text: string): string {
  // Most of a reply's values have no run of 12 digits: a scan finds that faster than the pattern.
  if (!hasDigitRun(text)) return text
  return text.replace(DIGIT_RUN, (run) => (luhn(run) ? run.slice(0, 6) + "*".repeat(run.length - 10) + run.slice(-4) : run))
}

const PEM = /-----BEGIN [A-Z ]*PRIVATE KEY-----/

/** A copy of `value` with dropped fields removed and PAN-shaped digits masked. */
export function sanitizeJson(value: JsonValue): JsonValue {
  if (typeof value === "string") return PEM.test(value) ? "[removed]" : maskPans(value)
  if (typeof value === "number") {
    // A PAN sent as a JSON number (16 digits fit a double exactly) is masked too.
    const text = Number.isInteger(value) ? String(value) : ""
    return maskPans(text) === text ? value : maskPans(text)
  }
  if (value === null || typeof value === "boolean") return value
  if (Array.isArray(value)) return (value as ReadonlyArray<JsonValue>).map(sanitizeJson)
  const out: Record<string, JsonValue> = {}
  const record = value as { readonly [key: string]: JsonValue }
  for (const key of Object.keys(record)) {
    const v = record[key]
    if (isDroppedField(key) || v === undefined) continue
    out[maskPans(key)] = sanitizeJson(v)
  }
  return out
}
