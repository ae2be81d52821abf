/**
 * The store's own guard against keeping card data or secrets. Whatever the caller hands over, an
 * outcome's JSON loses every field whose name is a card, CVV, key or digest field, and every
 * PAN-shaped digit run (Luhn-valid, 12–19 digits, even glued to letters or underscores) is masked
 * by `maskPans` of `@paykit/contracts/card-data`. It is deliberately independent of the pipeline's
 * redaction: it is the last step before durable storage, and a miss there would be written to disk
 * and to backups.
 *
 * @packageDocumentation
 */
import { maskPans } from "@paykit/contracts/card-data"
import type { JsonValue } from "./types"

export { maskPans }

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
