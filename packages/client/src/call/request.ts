/**
 * The signed escape hatch, `request()` (docs/decisions.md#24-a-signed-escape-hatch): an operation or
 * field beyond the spec, described by the caller (path, auth, the control's field list, the wire
 * fields, read or money), checked as far as a description can be, and turned into a
 * {@link PreparedOperation} for this one call. From there it runs the steps every typed call runs
 * (`pipeline.ts`: the one attempt, hooks, spans, deadlines, read retries; `money.ts`: the
 * idempotency key, the intent ledger, reconciliation by `client_orderid`). Nothing here sends,
 * signs or retries.
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts/operations"
import { toMinorUnits } from "@paykit/signing"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { PayClientConfig } from "../config"
import { InputError, type ReadError, type ReconcileError } from "../errors"
import { newIdempotencyKey } from "../intents/ledger"
import { scrubText } from "../operations/redact"
import type { Keyed, PreparedAuth, PreparedOperation, Reconciled } from "../operations/table"
import { groupPathOf, signingFailure, type Checked } from "./check"
import { describeIssue } from "./classify"
import { checkCallOptions, usableKey, type CallOptions } from "./options"
import type { SigningKeys } from "./sign"

/** What a `request()` call is: `read` (nothing moves; resent on a transient failure) or `money` (reconciled by `client_orderid`, never resent blindly). */
export type RequestKind = "read" | "money"

/** How a `request()` call is signed: the spec's scheme names (`x-paykit-auth`). */
export type RequestAuth = "control" | "oauth-hmac-sha1" | "oauth-rsa-sha256"

interface PayRequestBase<K extends RequestKind> {
  /**
   * The operation's path relative to the client's `baseUrl`, ending in `/{endpointId}` (filled in
   * with the configured endpoint, or the group with `{ endpoint: "group" }`), e.g.
   * `/api/v2/x-test/loyalty-credit/{endpointId}`. Segments of letters, digits, `-`, `_`, `.`, `~`.
   */
  readonly path: string
  /** `read` or `money` (see {@link RequestKind}). */
  readonly kind: K
  /**
   * The wire fields, by the gateway's names, each a string (amounts as decimal strings), sent as
   * given (no `control`: the client adds it). A `money` call carries its order's `client_orderid`
   * (or the spellings `client-orderid`, `client-order-id`).
   */
  readonly fields: Readonly<Record<string, string>>
  /**
   * The name hooks, spans, logs, errors and the intent ledger know this call by (1–64 letters,
   * digits, `-`, `_`, `.`; not an operation id of the spec). Default: the path's segment before
   * `/{endpointId}` (`loyalty-credit`).
   */
  readonly operation?: string | undefined
}

/**
 * A request beyond the spec, for `request()`: where it goes, how it is signed, what it carries and
 * whether it moves money.
 */
export type PayRequest<K extends RequestKind = RequestKind> = PayRequestBase<K> & (
  | {
    /** A control digest (SHA-1) over `controlFields`, then the merchant control key. */
    readonly auth: "control"
    /**
     * The digest's inputs in order, as the spec's control rules digest theirs: each a name in
     * `fields` (its value as sent; `amount` in minor units of `currency`, cents by default), or
     * `endpointId` for the path's endpoint id. `login` here, absent from `fields`, is sent as the
     * configured login (as typed calls fill it).
     */
    readonly controlFields: ReadonlyArray<string>
  }
  | {
    /** OAuth 1.0a over the URL and every field: HMAC-SHA1 with the control key, or RSA-SHA256 with `privateKeyPem`. */
    readonly auth: "oauth-hmac-sha1" | "oauth-rsa-sha256"
    /** Not used: OAuth signs every field. */
    readonly controlFields?: undefined
  }
)

/** The decoded reply of a `request()` call: every field of the gateway's JSON reply, as a string. */
export type RequestReply = Readonly<Record<string, string>>

/**
 * What `request()` resolves to: the reply for a read; for a money call the reply with its
 * idempotency key, or {@link Reconciled} when its reply was lost and `status` proved the order.
 */
export type RequestResult<K extends RequestKind> = K extends "money" ? (RequestReply & Keyed) | Reconciled : RequestReply

/** The error channel of `request()`: a read's call errors; a money call's also `OutcomeUnknown` and `ReconcileConflict`. */
export type RequestError<K extends RequestKind> = K extends "money" ? ReconcileError : ReadError

const KINDS: ReadonlySet<string> = new Set(["read", "money"])
const AUTHS: ReadonlySet<string> = new Set(["control", "oauth-hmac-sha1", "oauth-rsa-sha256"])
const ENDPOINT = "{endpointId}"
const PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/
const MAX_PATH = 256
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const FIELD_NAME = /^[A-Za-z0-9_.[\]-]{1,64}$/
const CLIENT_ORDER_ID_FIELDS = ["client_orderid", "client-orderid", "client-order-id"] as const

// A wire value goes into a form body and a digest as it is: a line break or NUL in it is a caller's
// bug (or an injection), never data.
const WireValue = Schema.String.pipe(Schema.filter((s) => !/[\r\n\0]/.test(s), { message: () => "must not contain CR, LF or NUL" }))
const decodeFields = Schema.decodeUnknownEither(Schema.Record({ key: Schema.String, value: WireValue }), { errors: "first" })

// A reply's fields as strings: the gateway writes strings, and some ids as JSON numbers.
const ReplyValue = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)
const decodeReplyRecord = Schema.decodeUnknownEither(Schema.Record({ key: Schema.String, value: ReplyValue }), { errors: "first" })

/** A 2xx body as a record of strings (a new object); a body that is not a flat JSON object is a `DecodeError`'s issue. */
function decodeReply(body: unknown) {
  return Either.map(decodeReplyRecord(body), (record) => {
    const out: Record<string, string> = {}
    for (const name in record) {
      const value = record[name]
      if (value !== null && value !== undefined) out[name] = String(value)
    }
    return out
  })
}

/** A field name as an error may show it: JSON-escaped (no line break), cut to 64 characters, scrubbed. */
const shown = (name: string): string => scrubText(JSON.stringify(name.slice(0, 64)).slice(1, -1))

type Issue = { readonly field: string; readonly rule: string }

function pathIssue(path: unknown): Issue | undefined {
  const rule = (text: string): Issue => ({ field: "path", rule: text })
  if (typeof path !== "string" || !path.startsWith("/")) return rule("must be a string starting with / (relative to the client's baseUrl)")
  if (path.length > MAX_PATH) return rule(`must be at most ${MAX_PATH} characters`)
  const segments = path.slice(1).split("/")
  if (segments[segments.length - 1] !== ENDPOINT) return rule("must end in /{endpointId} (the endpoint id the call goes to)")
  if (segments.length < 2) return rule("must name the operation before /{endpointId}")
  for (const segment of segments.slice(0, -1)) {
    if (!PATH_SEGMENT.test(segment) || segment === "." || segment === "..") {
      return rule("each segment must be letters, digits, -, _, . or ~ (no empty, . or .. segment, no query or fragment)")
    }
  }
  return undefined
}

function nameIssue(name: string, given: boolean): Issue | undefined {
  if (!NAME.test(name)) {
    return { field: "operation", rule: given ? "must be 1–64 letters, digits, -, _ or . (starting with a letter or digit)" : "the path's last segment cannot name the call: give operation" }
  }
  // The spec's ids name the typed calls in the intent ledger (and `recover()` judges by them).
  if (Object.prototype.hasOwnProperty.call(operations, name)) {
    return { field: "operation", rule: `${name} is an operation id of the spec${given ? "" : " (taken from the path)"}: name this call otherwise` }
  }
  return undefined
}

/** Everything a description breaks that can be checked without the gateway, or the prepared call. */
function check(
  config: PayClientConfig,
  keys: SigningKeys,
  d: Record<string, unknown>,
  kind: RequestKind,
  name: string
): Issue | { readonly op: PreparedOperation; readonly values: Readonly<Record<string, string>> } {
  const path = d["path"] as string
  const auth = d["auth"]
  if (typeof auth !== "string" || !AUTHS.has(auth)) return { field: "auth", rule: "must be \"control\", \"oauth-hmac-sha1\" or \"oauth-rsa-sha256\"" }
  const fields = d["fields"]
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) return { field: "fields", rule: "expected an object of wire fields (name → string)" }
  const oauth = auth !== "control"
  for (const field of Object.keys(fields)) {
    // `__proto__` would set the prototype of the object the fields are copied into, not a field.
    if (!FIELD_NAME.test(field) || field === "__proto__") return { field: `fields.${shown(field)}`, rule: "a field name must be 1–64 letters, digits, _, -, ., [ or ]" }
    if (field === "control") return { field: "fields.control", rule: "is added by the client (the control digest)" }
    if (field === "endpointId") return { field: "fields.endpointId", rule: "travels in the path (controlFields' endpointId stands for it)" }
    if (oauth && field.startsWith("oauth_")) return { field: `fields.${field}`, rule: "oauth_ parameters travel in the Authorization header" }
  }
  const decoded = decodeFields(fields)
  if (Either.isLeft(decoded)) {
    const issue = describeIssue(decoded.left)
    return { field: `fields.${issue.field}`, rule: issue.rule }
  }
  const controlFields = d["controlFields"]
  let values: Record<string, string> = decoded.right
  let prepared: PreparedAuth
  if (oauth) {
    if (controlFields !== undefined) return { field: "controlFields", rule: "only with auth \"control\" (OAuth signs every field)" }
    // Checked before anything is read or sent, as for the typed OAuth RSA operations.
    if (auth === "oauth-rsa-sha256" && keys.privateKey === undefined) return { field: "privateKeyPem", rule: "required for OAuth RSA-SHA256 operations" }
    prepared = { scheme: auth as "oauth-hmac-sha1" | "oauth-rsa-sha256" }
  } else {
    if (!Array.isArray(controlFields) || controlFields.length === 0 || controlFields.some((f) => typeof f !== "string")) {
      return { field: "controlFields", rule: "expected a non-empty array of field names (the digest's inputs in order)" }
    }
    const list = [...(controlFields as ReadonlyArray<string>)]
    // As typed calls fill `login` from the config, a digest over `login` gets the configured one.
    if (list.includes("login") && values["login"] === undefined) values = { ...values, login: config.login }
    for (const field of list) {
      if (field !== "endpointId" && values[field] === undefined) {
        return { field: "controlFields", rule: `lists ${shown(field)}, which fields lacks (every input of the digest is sent)` }
      }
    }
    if (list.includes("amount")) {
      const currency = values["currency"]
      if (currency === undefined) return { field: "fields.currency", rule: "required beside amount in controlFields (amount enters the digest in minor units of currency)" }
      try {
        toMinorUnits(values["amount"]!, currency, { minorUnits: config.minorUnits })
      } catch (error) {
        const failure = signingFailure(name, error)
        return { field: `fields.${failure.field}`, rule: failure.rule }
      }
    }
    prepared = { scheme: "control", code: "request", fields: list }
  }
  const clientOrderIdField = CLIENT_ORDER_ID_FIELDS.find((f) => values[f] !== undefined)
  if (kind === "money") {
    if (clientOrderIdField === undefined) return { field: "fields.client_orderid", rule: "required for a money call (its order is reconciled by it)" }
    if (values[clientOrderIdField] === "") return { field: `fields.${clientOrderIdField}`, rule: "must not be empty" }
    // Only an order-creating call is proven by the order its client_orderid names; what a call on
    // an existing order changes there is not known for an operation outside the spec.
    if (values["orderid"] !== undefined) {
      return { field: "fields.orderid", rule: "a money call through request() creates the order its client_orderid names; one on an existing order cannot be reconciled" }
    }
  }
  return {
    values,
    op: {
      id: name,
      method: name,
      path,
      groupPath: path.replace(ENDPOINT, `group/${ENDPOINT}`),
      auth: prepared,
      retry: kind === "money" ? "reconcile" : "read",
      spanName: "paykit.request",
      hasLogin: false,
      clientOrderIdField,
      onExistingOrder: false,
      fieldNames: Object.keys(values).sort(),
      decodeInput: (input) => decodeFields(input),
      decodeReply
    }
  }
}

/**
 * Checks one `request()` call: the operation prepared for it, its wire values and the endpoint id,
 * or the `InputError` (naming the field and the rule, never a value) it ends with before anything
 * is read or sent. A money call's error carries its idempotency key, as a typed call's does.
 */
export function checkRequest(config: PayClientConfig, keys: SigningKeys, description: unknown, options: CallOptions): Checked {
  const d = typeof description === "object" && description !== null ? description as Record<string, unknown> : undefined
  const kind = d?.["kind"]
  const money = kind === "money"
  const fail = (operation: string, issue: Issue): Checked => ({
    failure: Effect.fail(new InputError({
      operation,
      field: issue.field,
      rule: issue.rule,
      idempotencyKey: money ? (usableKey(options.idempotencyKey) ?? newIdempotencyKey()) : undefined
    }))
  })
  if (d === undefined) return fail("request", { field: "request", rule: "expected an object describing the request (path, auth, fields, kind)" })
  if (typeof kind !== "string" || !KINDS.has(kind)) return fail("request", { field: "kind", rule: "must be \"read\" or \"money\"" })
  const badPath = pathIssue(d["path"])
  if (badPath !== undefined) return fail("request", badPath)
  const path = d["path"] as string
  const given = d["operation"]
  if (given !== undefined && typeof given !== "string") return fail("request", { field: "operation", rule: "must be a string" })
  const segments = path.split("/")
  const name = given ?? segments[segments.length - 2]!
  const badName = nameIssue(name, given !== undefined)
  if (badName !== undefined) return fail("request", badName)
  const badOption = checkCallOptions(options)
  if (badOption !== undefined) return fail(name, badOption)
  const checked = check(config, keys, d, kind as RequestKind, name)
  if ("field" in checked) return fail(name, checked)
  const endpointId = options.endpoint === "group" ? (config.endpointGroupId ?? config.endpointId) : config.endpointId
  if (groupPathOf(config, options) && config.endpointGroupId === undefined) return fail(name, { field: "endpointGroupId", rule: "required for the /group/{endpointGroupId} path form" })
  return { op: checked.op, values: checked.values, endpointId }
}
