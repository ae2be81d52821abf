/**
 * Every reply classified: a raw `{ status, body }` becomes the typed result or exactly one typed
 * error. 2xx → the decoded reply (or `DecodeError`, which on a money-moving call means "processed,
 * reply unreadable": reconcile); 400 → refusal by `error-code` category; 404 → the same, and
 * `unknown-path` naming the operation's path when the body is not the gateway's (the request was
 * not processed); 401/403 → `AuthenticationError`; 408, 429 and 5xx → `GatewayServerError`
 * (transient); anything else → `DecodeError`. Every gateway text is scrubbed before it reaches an
 * error.
 *
 * @packageDocumentation
 */
import { errorCodes } from "@paykit/contracts/operations"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import { AuthenticationError, DecodeError, GatewayServerError, GatewayValidationError, type CallError } from "../errors"
import { decodeServerError, decodeValidationError, type PreparedOperation } from "../operations/table"
import { scrubReplyTexts, scrubText, sensitiveFields } from "../operations/redact"
import type { RawReply } from "../transport/fetch"

/** First issue of a parse error as field + rule, with the offending value never included. */
export function describeIssue(error: ParseResult.ParseError): { field: string; rule: string } {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return { field: "input", rule: "invalid" }
  const field = issue.path.length === 0 ? "input" : issue.path.map(String).join(".")
  // Schema messages end in `, actual <value>`: cut it, so no value (a PAN, a CVV) is ever echoed.
  let rule = issue.message.replace(/,\s*actual[\s\S]*$/, "").replace(/\s*\n[\s\S]*$/, "")
  if (sensitiveFields.has(field)) rule = rule.includes("(value not shown)") ? rule : `${rule} (value not shown)`
  return { field: scrubText(field), rule: scrubText(rule) }
}

// The ids a gateway may send as JSON numbers; the client's results carry them as strings.
const ID_FIELDS: ReadonlyArray<string> = ["paynet-order-id", "end-point-id", "error-code"]

function normalizeIds(reply: Record<string, unknown>): Record<string, unknown> {
  for (const key of ID_FIELDS) {
    const value = reply[key]
    if (typeof value === "number") reply[key] = String(value)
  }
  return reply
}

/** HTTP statuses that say "try again later" rather than "refused". */
export const TRANSIENT_HTTP: ReadonlySet<number> = new Set([408, 429])

/** Turns a raw reply into the typed result or a typed error. */
export function classifyReply(op: PreparedOperation, raw: RawReply): Either.Either<Record<string, unknown>, CallError> {
  const operation = op.method
  const status = raw.status
  if (status >= 200 && status < 300) {
    const decoded = op.decodeReply(raw.body)
    if (Either.isLeft(decoded)) {
      const { field, rule } = describeIssue(decoded.left)
      return Either.left(new DecodeError({ operation, httpStatus: status, issue: `${field}: ${rule}` }))
    }
    // A gateway may echo card data into its own texts (a decline's error-message): scrubbed here, so
    // no result, reconciled status or status snapshot on an error carries it.
    const reply = scrubReplyTexts(normalizeIds(decoded.right))
    // The gateway's status carries `html` (a form to the issuer) beside `redirect-to` while 3DS is pending.
    const html = (raw.body as { html?: unknown } | null)?.html
    if (op.id === "STATUS" && typeof html === "string") reply["html"] = html
    return Either.right(reply)
  }
  if (status === 400 || status === 404) {
    const decoded = decodeValidationError(raw.body)
    if (Either.isLeft(decoded)) {
      // A 404 without the gateway's body (a base URL that is no gateway, a proxy's page) is still
      // "no operation at this path": not processed, and named so.
      if (status === 404) return Either.left(unknownPath(operation, op.path))
      const { field, rule } = describeIssue(decoded.left)
      return Either.left(new DecodeError({ operation, httpStatus: 400, issue: `${field}: ${rule}` }))
    }
    const errorCode = scrubText(String(decoded.right["error-code"]))
    const errorMessage = scrubText(decoded.right["error-message"])
    const serialNumber = scrubText(decoded.right["serial-number"])
    const category = (errorCodes as Record<string, { category: string } | undefined>)[errorCode]?.category ?? "unknown"
    return Either.left(
      category === "auth"
        ? new AuthenticationError({ operation, errorCode, errorMessage, serialNumber })
        : new GatewayValidationError({ operation, errorCode, errorMessage, category, serialNumber })
    )
  }
  const body = bodyCode(raw.body)
  if (status === 401 || status === 403) {
    return Either.left(new AuthenticationError({ operation, errorCode: body?.code ?? `http-${status}`, errorMessage: body?.message ?? `HTTP ${status}` }))
  }
  if (status >= 500 || TRANSIENT_HTTP.has(status)) {
    return Either.left(new GatewayServerError({ operation, httpStatus: status, errorCode: body?.code ?? "unknown", errorMessage: body?.message ?? "no error body" }))
  }
  return Either.left(new DecodeError({ operation, httpStatus: status, issue: "unexpected HTTP status" }))
}

/** The refusal of a path nothing answers at (spec error-code `unknown-path`), naming that path. */
function unknownPath(operation: string, path: string): GatewayValidationError {
  return new GatewayValidationError({ operation, errorCode: "unknown-path", errorMessage: `path: no operation at ${path} (HTTP 404)`, category: "validation" })
}

function bodyCode(body: unknown): { code: string; message: string } | undefined {
  const decoded = decodeServerError(body)
  if (Either.isRight(decoded)) return { code: scrubText(String(decoded.right["error-code"])), message: scrubText(decoded.right["error-message"]) }
  const validation = decodeValidationError(body)
  if (Either.isRight(validation)) return { code: scrubText(String(validation.right["error-code"])), message: scrubText(validation.right["error-message"]) }
  return undefined
}
