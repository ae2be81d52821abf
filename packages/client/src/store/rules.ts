/**
 * The store's input rules, shared by every adapter: what an intent, an outcome, a lease and an
 * owner may be, and when a second request under one idempotency key is a different request.
 *
 * @packageDocumentation
 */
import { sanitizeJson } from "./sanitize"
import { StoreInputError, type BeforeSnapshot, type Intent, type IntentInput, type IntentOutcome, type JsonValue } from "./types"

const AMOUNT = /^(?:0|[1-9]\d*)(?:\.\d+)?$/
const CURRENCY = /^[A-Z]{3}$/
const DATA_LIMIT = 64 * 1024

type Check = { readonly field: string; readonly rule: string } | undefined

function text(field: string, value: unknown, max: number, optional = false): Check {
  if (value === undefined && optional) return undefined
  if (typeof value !== "string") return { field, rule: "must be a string" }
  if (value.length === 0 || value.length > max) return { field, rule: `must be 1–${max} characters` }
  return undefined
}

function fail(method: string, check: Check): StoreInputError | undefined {
  return check === undefined ? undefined : new StoreInputError({ method, field: check.field, rule: check.rule })
}

/** Checks an intent; `undefined` when it is fine. */
export function checkIntent(input: IntentInput): StoreInputError | undefined {
  const amount = input.amount
  const currency = input.currency
  return fail(
    "recordIntent",
    text("idempotencyKey", input.idempotencyKey, 255)
      ?? text("operation", input.operation, 64)
      ?? text("client_orderid", input.client_orderid, 255)
      ?? text("orderid", input.orderid, 64, true)
      ?? text("endpoint", input.endpoint, 64)
      ?? (amount !== undefined && (typeof amount !== "string" || !AMOUNT.test(amount) || amount.length > 32)
        ? { field: "amount", rule: "must be a decimal string such as 10.00 (never a float)" }
        : undefined)
      ?? (currency !== undefined && (typeof currency !== "string" || !CURRENCY.test(currency))
        ? { field: "currency", rule: "must be a 3-letter ISO 4217 code in upper case" }
        : undefined)
  )
}

/** Checks a lease length and an owner. */
export function checkClaim(method: string, leaseMs: number, owner: string): StoreInputError | undefined {
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1) return new StoreInputError({ method, field: "leaseMs", rule: "must be a positive integer of milliseconds" })
  return fail(method, text("owner", owner, 200))
}

/** Checks a key argument. */
export function checkKey(method: string, field: string, key: string, max = 255): StoreInputError | undefined {
  return fail(method, text(field, key, max))
}

/** Checks an outcome and returns it sanitised (no card data, no secrets), or the error. */
export function prepareOutcome(outcome: IntentOutcome): IntentOutcome | StoreInputError {
  const method = "recordOutcome"
  const check = outcome._tag === "Returned"
    ? text("status", outcome.status, 32)
    : outcome._tag === "Failed"
    ? text("errorTag", outcome.errorTag, 64)
    : { field: "_tag", rule: "must be Returned or Failed" }
  const bad = fail(method, check ?? text("orderid", outcome.orderid, 64, true))
  if (bad !== undefined) return bad
  let data: JsonValue | undefined
  if (outcome.data !== undefined) {
    let serialized: string | undefined
    try {
      serialized = JSON.stringify(outcome.data)
    } catch {
      serialized = undefined
    }
    if (serialized === undefined) return new StoreInputError({ method, field: "data", rule: "must be JSON" })
    if (serialized.length > DATA_LIMIT) return new StoreInputError({ method, field: "data", rule: `must serialise to at most ${DATA_LIMIT} characters` })
    // A flat record of JSON's own values (a gateway reply) is what its JSON text parses back to:
    // sanitised as it is, it is not parsed again. Anything else is taken from its JSON text.
    data = sanitizeJson(flatJson(outcome.data) ? outcome.data : JSON.parse(serialized) as JsonValue)
  }
  return outcome._tag === "Returned"
    ? { _tag: "Returned", status: outcome.status, orderid: outcome.orderid, data }
    : { _tag: "Failed", errorTag: outcome.errorTag, orderid: outcome.orderid, data }
}

/** A plain object whose values are strings, finite numbers, booleans or null. */
function flatJson(value: unknown): value is { readonly [key: string]: JsonValue } {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false
  for (const key in value) {
    const v = (value as Record<string, unknown>)[key]
    if (!(typeof v === "string" || typeof v === "boolean" || v === null || (typeof v === "number" && Number.isFinite(v)))) return false
  }
  return true
}

/** The status reply's fields a {@link BeforeSnapshot} keeps: what proves a call on an existing order landed. */
export const BEFORE_FIELDS: ReadonlyArray<string> = [
  "status", "transaction-type", "serial-number", "amount", "currency", "captured-amount", "returned-amount",
  "hold-released-amount", "chargeback-amount", "order-stage", "paynet-order-id", "merchant-order-id", "card-ref-id"
]

/**
 * Reduces a status reply to its {@link BeforeSnapshot} (only {@link BEFORE_FIELDS}, only string or
 * number values, each at most 128 characters), or the error naming the rule it broke.
 */
export function prepareBefore(reply: unknown): BeforeSnapshot | StoreInputError {
  const method = "recordBefore"
  if (typeof reply !== "object" || reply === null) return new StoreInputError({ method, field: "before", rule: "must be the order's status reply (an object)" })
  const source = reply as Record<string, unknown>
  const out: Record<string, string> = {}
  for (const field of BEFORE_FIELDS) {
    const value = source[field]
    if (value === undefined || value === null) continue
    if (typeof value !== "string" && typeof value !== "number") return new StoreInputError({ method, field: `before.${field}`, rule: "must be a string or a number" })
    const text = String(value)
    if (text.length > 128) return new StoreInputError({ method, field: `before.${field}`, rule: "must be at most 128 characters" })
    out[field] = text
  }
  if (out["status"] === undefined || out["status"] === "") return new StoreInputError({ method, field: "before.status", rule: "is required" })
  return out as BeforeSnapshot
}

// "10.50" and "10.5" are one amount; compared as digit strings, never as floats.
function canonicalAmount(amount: string | undefined): string | undefined {
  if (amount === undefined || !amount.includes(".")) return amount
  const trimmed = amount.replace(/0+$/, "")
  return trimmed.endsWith(".") ? trimmed.slice(0, -1) : trimmed
}

/** The request fields in which `input` differs from the recorded intent (empty: the same request). */
export function conflictingFields(recorded: IntentInput, input: IntentInput): ReadonlyArray<string> {
  const out: Array<string> = []
  if (recorded.operation !== input.operation) out.push("operation")
  if (recorded.client_orderid !== input.client_orderid) out.push("client_orderid")
  if ((recorded.orderid ?? undefined) !== (input.orderid ?? undefined)) out.push("orderid")
  if (canonicalAmount(recorded.amount) !== canonicalAmount(input.amount)) out.push("amount")
  if ((recorded.currency ?? undefined) !== (input.currency ?? undefined)) out.push("currency")
  if (recorded.endpoint !== input.endpoint) out.push("endpoint")
  return out
}

/** Whether an unfinished intent's holder has lost it at `now`. */
export function leaseExpired(intent: Pick<Intent, "leaseUntil">, now: number): boolean {
  return intent.leaseUntil <= now
}

/** What `recordIntent` refuses before the store is asked, in either form (Effect or Promise). */
export function checkRecordIntent(intent: IntentInput, leaseMs: number, owner: string): StoreInputError | undefined {
  return checkIntent(intent) ?? checkClaim("recordIntent", leaseMs, owner)
}

/** `recordOutcome`'s outcome ready for the store, or what it refuses before the store is asked. */
export function prepareRecordOutcome(key: string, outcome: IntentOutcome): IntentOutcome | StoreInputError {
  return checkKey("recordOutcome", "idempotencyKey", key) ?? prepareOutcome(outcome)
}

/** `recordOutcome` for a key with no recorded intent. */
export const noRecordedIntent = (): StoreInputError =>
  new StoreInputError({ method: "recordOutcome", field: "idempotencyKey", rule: "has no recorded intent" })

/**
 * Whether `recordOutcome` refuses `outcome` on `existing`: a success stands for good; a success
 * replaces a recorded failure (money moved, whatever was concluded meanwhile); a failure needs an
 * unfinished intent and, when `attempt` is given, the writer's fencing token.
 */
export function outcomeRefused(existing: Intent, outcome: IntentOutcome, attempt: number | undefined): boolean {
  if (existing.outcome?._tag === "Returned") return true
  if (outcome._tag === "Returned") return false
  return existing.outcome !== undefined || (attempt !== undefined && existing.attempts !== attempt)
}
