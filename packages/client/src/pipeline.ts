/**
 * The request pipeline shared by all 26 operations: decode input → sign → send → decode reply,
 * wrapped in retries (reads) or reconciliation (money-moving calls), inside one span per call.
 *
 * @packageDocumentation
 */
import { errorCodes, type OperationId } from "@paykit/contracts"
import { Duration, Effect, Either, ParseResult } from "effect"
import type { PayClientConfig, RetryPolicy } from "./config"
import {
  AuthenticationError,
  DecodeError,
  GatewayServerError,
  GatewayValidationError,
  InputError,
  type CallError,
  type ReconcileError
} from "./errors"
import { decodeServerError, decodeValidationError, preparedOperations, type PreparedOperation, type StatusReply } from "./operations"
import { outcomeUnknown, reconcile, type StatusLookup } from "./reconcile"
import { scrubText, sensitiveFields } from "./redact"
import { signRequest, type SigningKeys } from "./sign"
import type { RawReply, Transport } from "./transport"

/** Per-call overrides. */
export interface CallOptions {
  /** Overrides of the client's retry policy for this call. */
  readonly retry?: Partial<RetryPolicy> | undefined
  /** Per-attempt timeout in ms. */
  readonly timeoutMs?: number | undefined
  /** Send to the endpoint group instead of the endpoint (needs `endpointGroupId` in the config). */
  readonly endpoint?: "endpoint" | "group" | undefined
}

/** Runs operations. */
export interface Pipeline {
  readonly call: (operation: OperationId, input: unknown, options?: CallOptions) => Effect.Effect<unknown, ReconcileError>
  readonly status: StatusLookup
}

/** First issue of a parse error as field + rule, with the offending value never included. */
export function describeIssue(error: ParseResult.ParseError): { field: string; rule: string } {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return { field: "input", rule: "invalid" }
  const field = issue.path.length === 0 ? "input" : issue.path.map(String).join(".")
  // Schema messages end in `, actual <value>`: cut it, so no value (a PAN, a CVV) is ever echoed.
  let rule = issue.message.replace(/,\s*actual[\s\S]*$/, "").replace(/\s*\n[\s\S]*$/, "")
  if (sensitiveFields.has(field)) rule = rule.includes("(value not shown)") ? rule : `${rule} (value not shown)`
  return { field, rule: scrubText(rule) }
}

function normalizeIds(reply: Record<string, unknown>): Record<string, unknown> {
  for (const key of ["paynet-order-id", "end-point-id", "error-code"]) {
    const value = reply[key]
    if (typeof value === "number") reply[key] = String(value)
  }
  return reply
}

/** Turns a raw reply into the typed result or a typed error. */
export function classifyReply(op: PreparedOperation, raw: RawReply): Either.Either<unknown, CallError> {
  const operation = op.method
  if (raw.status >= 200 && raw.status < 300) {
    const decoded = op.decodeReply(raw.body)
    if (Either.isLeft(decoded)) {
      const { field, rule } = describeIssue(decoded.left)
      return Either.left(new DecodeError({ operation, httpStatus: raw.status, issue: `${field}: ${rule}` }))
    }
    return Either.right(normalizeIds({ ...decoded.right }))
  }
  if (raw.status === 400) {
    const decoded = decodeValidationError(raw.body)
    if (Either.isLeft(decoded)) {
      const { field, rule } = describeIssue(decoded.left)
      return Either.left(new DecodeError({ operation, httpStatus: 400, issue: `${field}: ${rule}` }))
    }
    const errorCode = String(decoded.right["error-code"])
    const errorMessage = scrubText(decoded.right["error-message"])
    const serialNumber = decoded.right["serial-number"]
    const category = (errorCodes as Record<string, { category: string } | undefined>)[errorCode]?.category ?? "unknown"
    return Either.left(
      category === "auth"
        ? new AuthenticationError({ operation, errorCode, errorMessage, serialNumber })
        : new GatewayValidationError({ operation, errorCode, errorMessage, category, serialNumber })
    )
  }
  if (raw.status >= 500) {
    const decoded = decodeServerError(raw.body)
    return Either.left(new GatewayServerError({
      operation,
      httpStatus: raw.status,
      errorCode: Either.isRight(decoded) ? String(decoded.right["error-code"]) : "unknown",
      errorMessage: Either.isRight(decoded) ? scrubText(decoded.right["error-message"]) : "no error body"
    }))
  }
  return Either.left(new DecodeError({ operation, httpStatus: raw.status, issue: "unexpected HTTP status" }))
}

/** Backoff ceiling for the n-th retry (1-based), with optional full jitter. */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1))
  return policy.jitter ? Math.random() * ceiling : ceiling
}

function retriable(error: CallError): boolean {
  return error._tag === "TransportError" || error._tag === "Timeout" || error._tag === "GatewayServerError"
}

// The signing package's errors carry no secrets or values; keep their field and rule/reason only.
function signingFailure(operation: string, error: unknown): InputError {
  const e = error as { field?: unknown; rule?: unknown; reason?: unknown; currency?: unknown; _tag?: unknown }
  const field = typeof e.field === "string" ? e.field : typeof e.currency === "string" ? "currency" : "input"
  const rule = typeof e.rule === "string" ? e.rule : typeof e.reason === "string" ? e.reason : typeof e._tag === "string" ? e._tag : "cannot be signed"
  return new InputError({ operation, field, rule })
}

/** Builds the pipeline for one client. */
export function makePipeline(config: PayClientConfig, keys: SigningKeys, transport: Transport): Pipeline {
  const call = (operation: OperationId, input: unknown, options?: CallOptions): Effect.Effect<unknown, ReconcileError> => {
    const op = preparedOperations[operation]
    const endpointId = options?.endpoint === "group" ? (config.endpointGroupId ?? config.endpointId) : config.endpointId
    if (typeof input !== "object" || input === null) {
      return Effect.fail(new InputError({ operation: op.method, field: "input", rule: "expected an object of wire fields" }))
    }
    const raw = input as Record<string, unknown>
    const filled = op.hasLogin && raw["login"] === undefined ? { ...raw, login: config.login } : raw
    const decoded = op.decodeInput(filled)
    if (Either.isLeft(decoded)) {
      const { field, rule } = describeIssue(decoded.left)
      return Effect.fail(new InputError({ operation: op.method, field, rule }))
    }
    const values = decoded.right
    const policy = options?.retry === undefined ? config.retry : { ...config.retry, ...options.retry }
    const timeoutMs = options?.timeoutMs ?? config.timeoutMs
    const url = config.baseUrl + op.path.replace("{endpointId}", endpointId)
    const clientOrderId = op.clientOrderIdField === undefined ? "" : (values[op.clientOrderIdField] ?? "")
    const login = values["login"] ?? config.login

    // Signed per attempt: an OAuth nonce may not be reused, and the control is cheap.
    const sendOnce: Effect.Effect<unknown, CallError> = Effect.suspend(() => {
      let signed
      try {
        signed = signRequest(op.id, op.auth, values, keys, { endpointId, url, login })
      } catch (error) {
        return Effect.fail(signingFailure(op.method, error))
      }
      const body = signed.kind === "control" ? { ...values, control: signed.control } : values
      return transport({
        operation: op.method,
        path: op.path,
        endpointId,
        body,
        authorization: signed.kind === "header" ? signed.authorization : undefined,
        timeoutMs
      }).pipe(
        Effect.flatMap((reply) => {
          const result = classifyReply(op, reply)
          return Either.isRight(result) ? Effect.succeed(result.right) : Effect.fail(result.left)
        })
      )
    })

    const loop = (attempt: number): Effect.Effect<unknown, ReconcileError> =>
      Effect.matchEffect(sendOnce, {
        onSuccess: (reply) =>
          Effect.as(
            Effect.annotateCurrentSpan({ attempt, outcome: "ok" }),
            reply
          ),
        onFailure: (error) => {
          const finish = (e: ReconcileError) =>
            Effect.zipRight(Effect.annotateCurrentSpan({ attempt, outcome: e._tag }), Effect.fail(e))
          if (!retriable(error)) return finish(error)
          const next = attempt <= policy.maxRetries
            ? Effect.zipRight(
              Effect.logDebug("paykit: retrying").pipe(
                Effect.annotateLogs({ operation: op.id, attempt, error: error._tag })
              ),
              Effect.zipRight(Effect.sleep(Duration.millis(backoffMs(policy, attempt))), loop(attempt + 1))
            )
            : finish(error)
          if (op.retry === "read" || !outcomeUnknown(error)) return next
          return Effect.flatMap(reconcile(op, values, error, pipeline.status), (r) => {
            switch (r._tag) {
              case "Found":
                return Effect.as(Effect.annotateCurrentSpan({ attempt, outcome: "reconciled" }), r.result)
              case "Inconclusive":
                return finish(r.error)
              case "NotFound":
                // On an existing order "not found" cannot be fixed by resending; elsewhere a resend
                // with the same client_orderid is provably the first charge.
                return op.onExistingOrder ? finish(r.error) : next
            }
          })
        }
      })

    return loop(1).pipe(
      Effect.withSpan(op.spanName, {
        attributes: { operation: op.id, endpoint: endpointId, client_orderid: clientOrderId },
        kind: "client",
        // A stack trace per span costs more than the rest of the span; the operation name suffices.
        captureStackTrace: false
      })
    )
  }

  const pipeline: Pipeline = {
    call,
    status: (query) => call("STATUS", query) as Effect.Effect<StatusReply, CallError>
  }
  return pipeline
}
