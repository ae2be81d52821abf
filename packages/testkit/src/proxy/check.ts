/**
 * The checking proxy's judge: a request and its reply against the spec, by the same means the
 * simulator uses (its request validation in `http/validation.ts`, the contracts' operation table and
 * Effect Schemas). A finding names the side, the field and the rule, never a value: no card
 * number, control digest, OAuth signature or key can reach the log, the dashboard or a recording
 * through it.
 *
 * @packageDocumentation
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { operations, operationSchemas, ServerErrorResponse, ValidationErrorResponse, type OperationId } from "@paykit/contracts"
import { SimError, PAY_JSON } from "../http/replies"
import { checkAccept, checkCardNumbers, checkContentType, decodeRequest, parseForm } from "../http/validation"
import { cleanText } from "./mask"

/** What kind of difference from the spec a finding is. */
export type MismatchKind =
  /** A field the spec requires is absent. */
  | "missing-field"
  /** A field the spec does not define is present (a reply decoded with excess properties refused). */
  | "extra-field"
  /** A field is present with the wrong JSON type (a number where the spec says string, ...). */
  | "wrong-type"
  /** A value breaks its field's rule (pattern, length, enum), or a cross-field rule. */
  | "rule"
  /** An HTTP status the spec does not list for the operation (it lists 200, 400 and 500). */
  | "status"
  /** A header the spec fixes (`Accept`, `Content-Type`, `Authorization`) is absent or wrong. */
  | "header"
  /** The body is not what the media type says (a reply that is not JSON, a form that does not parse). */
  | "body"

/** One difference between an exchange and the spec. */
export interface Mismatch {
  /** Which message differs: the merchant's request or the gateway's reply. */
  readonly side: "request" | "reply"
  /** The kind of difference. */
  readonly kind: MismatchKind
  /** The field (a dotted path), header or `status`; `body` for the whole message. */
  readonly field: string
  /** The rule broken, in words; never the value that broke it. */
  readonly rule: string
}

/** `reply amount: missing-field (is missing)`: one finding as one line. */
export function formatMismatch(m: Mismatch): string {
  return `${m.side} ${m.field}: ${m.kind} (${m.rule})`
}

/** The statuses the interface lists for every operation (its Errors section). */
const SPEC_STATUSES: ReadonlySet<number> = new Set([200, 400, 500])

const STRICT = { errors: "all", onExcessProperty: "error" } as const
const decoders = new Map<Schema.Schema<unknown, unknown, never>, (u: unknown) => Either.Either<unknown, ParseResult.ParseError>>()

function decoderOf(schema: Schema.Schema<unknown, unknown, never>) {
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = Schema.decodeUnknownEither(schema, STRICT)
    decoders.set(schema, decode)
  }
  return decode
}

/**
 * The issues of decoding `value` by `schema` (strict: an unknown field is an issue), each reduced
 * to a finding. Schema messages end with `, actual <value>` for some rules: that part is cut, so a
 * value never reaches a finding.
 */
export function schemaMismatches(side: Mismatch["side"], schema: Schema.Schema<unknown, unknown, never>, value: unknown): Array<Mismatch> {
  const result = decoderOf(schema)(value)
  if (Either.isRight(result)) return []
  return ParseResult.ArrayFormatter.formatErrorSync(result.left).map((issue) => {
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : "body"
    const kind: MismatchKind =
      issue._tag === "Missing" ? "missing-field" : issue._tag === "Unexpected" ? "extra-field" : issue._tag === "Type" ? "wrong-type" : "rule"
    const rule = kind === "missing-field" ? "is missing" : kind === "extra-field" ? "not in the spec" : withoutActual(issue.message)
    return { side, kind, field: cleanText(field, 96), rule }
  })
}

function withoutActual(message: string): string {
  const cut = message.indexOf(", actual ")
  return cleanText((cut < 0 ? message : message.slice(0, cut)).replace(/\s+/g, " "))
}

/** What the proxy knows of a request when it judges it. */
export interface CheckedRequest {
  /** The operation the request's path names. */
  readonly operationId: OperationId
  /** The HTTP method as received. */
  readonly method: string
  /** Header lookup, lower-case names. */
  readonly header: (name: string) => string | null
  /** The body as text (UTF-8). */
  readonly body: string
}

/**
 * Judges a request by the simulator's own validation: method, `Accept`, `Content-Type`, a field
 * named twice, the operation's request Schema (every field, with its rule) and its cross-field
 * rules, card numbers (Luhn), and that it carries the signature its auth scheme asks for (a
 * `control` field or an OAuth `Authorization` header; their values are not read here).
 */
export function checkRequest(request: CheckedRequest): Array<Mismatch> {
  const found: Array<Mismatch> = []
  const spec = operations[request.operationId]
  if (request.method !== "POST") found.push({ side: "request", kind: "rule", field: "method", rule: `${request.operationId} takes POST` })
  headerCheck(found, "Accept", () => checkAccept(request.header("accept")))
  headerCheck(found, "Content-Type", () => checkContentType(request.header("content-type")))
  let fields: Record<string, string>
  try {
    fields = parseForm(request.body).fields
  } catch (error) {
    found.push({ side: "request", kind: "body", field: "body", rule: error instanceof SimError ? cleanText(error.message) : "not a form" })
    return found
  }
  try {
    decodeRequest(request.operationId, fields)
  } catch (error) {
    const detailed = schemaMismatches("request", operationSchemas[request.operationId].request as Schema.Schema<unknown, unknown, never>, fields)
      // The request Schemas allow fields beyond the spec (the gateway takes more); only the reply is held to excess.
      .filter((m) => m.kind !== "extra-field")
    if (detailed.length > 0) found.push(...detailed)
    else if (error instanceof SimError) found.push({ side: "request", kind: "rule", field: "body", rule: `${error.code}: ${cleanText(error.message)}` })
  }
  try {
    checkCardNumbers(fields)
  } catch (error) {
    if (error instanceof SimError) found.push({ side: "request", kind: "rule", field: error.message.slice(0, error.message.indexOf(":")), rule: "fails the Luhn check" })
  }
  if (spec.auth.scheme === "control") {
    if (fields["control"] === undefined) found.push({ side: "request", kind: "missing-field", field: "control", rule: `is missing (${spec.auth.code} signs this operation)` })
  } else if (!/^OAuth\s/i.test(request.header("authorization") ?? "")) {
    found.push({ side: "request", kind: "header", field: "Authorization", rule: `must be an OAuth header (${spec.auth.scheme})` })
  }
  return found
}

function headerCheck(found: Array<Mismatch>, name: string, check: () => void): void {
  try {
    check()
  } catch (error) {
    found.push({ side: "request", kind: "header", field: name, rule: error instanceof SimError ? cleanText(error.message) : "refused" })
  }
}

/**
 * Judges a reply: a status the interface lists (200, 400, 500), `Content-Type:
 * application/vnd.pay+json`, a JSON body, and that body decoded strictly by the Schema its status
 * calls for (the operation's response Schema, `ValidationErrorResponse` or `ServerErrorResponse`):
 * a missing field, a field the spec does not define, a wrong type and a broken rule each show.
 * Given the request's body, a `merchant-order-id` must also echo its `client_orderid`.
 */
export function checkReply(operationId: OperationId, status: number, contentType: string | null, body: string, requestBody?: string): Array<Mismatch> {
  const found: Array<Mismatch> = []
  if (!SPEC_STATUSES.has(status)) {
    found.push({ side: "reply", kind: "status", field: "status", rule: `HTTP ${status} is not in the spec (200, 400 or 500; a refused signature is a 400 there)` })
  }
  const media = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (media !== PAY_JSON) found.push({ side: "reply", kind: "header", field: "Content-Type", rule: `must be ${PAY_JSON}` })
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    found.push({ side: "reply", kind: "body", field: "body", rule: "not JSON" })
    return found
  }
  const schema =
    status === 200 ? operationSchemas[operationId].response : status === 500 ? ServerErrorResponse : status === 400 ? ValidationErrorResponse : undefined
  if (schema !== undefined) found.push(...schemaMismatches("reply", schema as Schema.Schema<unknown, unknown, never>, parsed))
  const echoed = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)["merchant-order-id"] : undefined
  if (requestBody !== undefined && (typeof echoed === "string" || typeof echoed === "number")) {
    const sent = new URLSearchParams(requestBody)
    const clientOrderId = sent.get("client_orderid") ?? sent.get("client-order-id")
    if (clientOrderId !== null && String(echoed) !== clientOrderId) {
      found.push({ side: "reply", kind: "rule", field: "merchant-order-id", rule: "must echo the request's client_orderid" })
    }
  }
  return found
}
