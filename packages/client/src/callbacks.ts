/**
 * Server callbacks: verification (constant-time `control` check through `@paykit/signing`, then the
 * contract's `ServerCallback` Schema) and a web-standard `Request → Response` handler that dedupes,
 * optionally confirms by `status`, and hands the typed callback to user code.
 *
 * Answers: 200 on success or duplicate; 403 on a bad signature; 500 when user code fails or the
 * status does not confirm the callback yet, so the gateway retries later (it retries until a 200).
 *
 * @packageDocumentation
 */
import { ServerCallback } from "@paykit/contracts"
import { Effect, Either, Schema } from "effect"
import { CallbackSignatureError, type CallError } from "./errors"
import { describeIssue } from "./pipeline"
import type { StatusLookup } from "./reconcile"
import { checkCallbackControl, type SigningKeys } from "./sign"

/** A verified, decoded callback. */
export type Callback = ServerCallback

/** What `verifyCallback` accepts: the query of a GET callback, its URL, or the request itself (GET query or POSTed form). */
export type CallbackInput = URLSearchParams | URL | Request

/**
 * Where the handler remembers callbacks it already handled. The key is
 * `status|type|orderid|client_orderid`, as the gateway advises. Only successful handling is
 * recorded, so a failed hand-off is retried by the gateway and handled again.
 */
export interface CallbackStore {
  /** Whether a callback with this key was already handed off. */
  readonly has: (key: string) => boolean | Promise<boolean>
  /** Records a handed-off callback's key. */
  readonly add: (key: string) => void | Promise<void>
}

/** An in-memory {@link CallbackStore} (a Set), the default. Use a shared store with several processes. */
export function memoryCallbackStore(): CallbackStore {
  const seen = new Set<string>()
  return { has: (key) => seen.has(key), add: (key) => void seen.add(key) }
}

/** Options of the callback handler. */
export interface CallbackHandlerOptions {
  /** User code; a failure (rejection, thrown error, failed Effect) answers 500 so the gateway retries. */
  readonly onCallback: (callback: Callback) => Effect.Effect<unknown, unknown> | Promise<unknown> | unknown
  /** Where handled callbacks are remembered for dedupe (default: {@link memoryCallbackStore}). */
  readonly store?: CallbackStore | undefined
  /**
   * Ask `status` before trusting the callback (default `false`): the callback's status must equal
   * the gateway's current status of the order, else 500 (the gateway will retry later).
   */
  readonly confirmByStatus?: boolean | undefined
}

const decodeCallback = Schema.decodeUnknownEither(ServerCallback, { onExcessProperty: "ignore" })

async function readParams(input: CallbackInput): Promise<URLSearchParams> {
  if (input instanceof URLSearchParams) return input
  if (input instanceof URL) return input.searchParams
  if (input.method === "POST") return new URLSearchParams(await input.text())
  return new URL(input.url).searchParams
}

/** Verifies and decodes a callback. */
export function verifyCallback(keys: SigningKeys, input: CallbackInput): Effect.Effect<Callback, CallbackSignatureError> {
  return Effect.flatMap(
    Effect.promise(() => readParams(input).catch(() => new URLSearchParams())),
    (params) => {
      // The digest signs one status, orderid and client_orderid; a name sent twice would let a holder
      // of one genuine callback append a second, unsigned value that a decoder then picks up.
      const seen = new Set<string>()
      for (const name of params.keys()) {
        if (seen.has(name)) return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: `${name}: sent more than once` }))
        seen.add(name)
      }
      const merchantOrder = params.get("merchant_order")
      if (merchantOrder !== null && merchantOrder !== params.get("client_orderid")) {
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: "merchant_order: must equal the signed client_orderid" }))
      }
      const status = params.get("status")
      const orderid = params.get("orderid")
      const clientOrderId = params.get("client_orderid")
      if (status === null || orderid === null || clientOrderId === null) {
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: "status, orderid and client_orderid are required" }))
      }
      const failure = checkCallbackControl({ status, orderid, client_orderid: clientOrderId }, params.get("control") ?? undefined, keys)
      if (failure !== undefined) return Effect.fail(new CallbackSignatureError({ reason: failure }))
      const decoded = decodeCallback(Object.fromEntries(params))
      if (Either.isLeft(decoded)) {
        const { field, rule } = describeIssue(decoded.left)
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: `${field}: ${rule}` }))
      }
      return Effect.succeed(decoded.right)
    }
  ).pipe(Effect.withSpan("paykit.callback.verify"))
}

/** Dedupe key of a callback. */
export function callbackKey(cb: Callback): string {
  return `${cb.status}|${cb.type}|${cb.orderid}|${cb.client_orderid}`
}

const text = (status: number, body: string) => new Response(body, { status, headers: { "Content-Type": "text/plain" } })

/** Builds the Effect-returning handler. */
export function makeCallbackHandler(
  keys: SigningKeys,
  lookup: StatusLookup,
  options: CallbackHandlerOptions
): (request: Request) => Effect.Effect<Response> {
  const store = options.store ?? memoryCallbackStore()
  const runUser = (cb: Callback): Effect.Effect<unknown, unknown> =>
    Effect.suspend(() => {
      const out = options.onCallback(cb)
      if (Effect.isEffect(out)) return out as Effect.Effect<unknown, unknown>
      if (out instanceof Promise) return Effect.tryPromise({ try: () => out, catch: (e) => e })
      return Effect.succeed(out)
    }).pipe(Effect.catchAllDefect((d) => Effect.fail(d)))

  return (request) =>
    Effect.gen(function*() {
      const verified = yield* Effect.either(verifyCallback(keys, request))
      if (Either.isLeft(verified)) {
        yield* Effect.annotateCurrentSpan({ outcome: verified.left.reason })
        return text(403, "forbidden")
      }
      const cb = verified.right
      const key = callbackKey(cb)
      if (yield* Effect.promise(async () => store.has(key))) {
        yield* Effect.annotateCurrentSpan({ outcome: "duplicate" })
        return text(200, "OK")
      }
      if (options.confirmByStatus === true) {
        const status = yield* Effect.either(lookup({ client_orderid: cb.client_orderid, orderid: cb.orderid }) as Effect.Effect<{ status: string }, CallError>)
        if (Either.isLeft(status) || status.right.status !== cb.status) {
          yield* Effect.annotateCurrentSpan({ outcome: "unconfirmed" })
          return text(500, "not confirmed")
        }
      }
      const handled = yield* Effect.either(runUser(cb))
      if (Either.isLeft(handled)) {
        yield* Effect.annotateCurrentSpan({ outcome: "handler-failed" })
        return text(500, "handler failed")
      }
      yield* Effect.promise(async () => store.add(key))
      yield* Effect.annotateCurrentSpan({ outcome: "handled" })
      return text(200, "OK")
    }).pipe(Effect.withSpan("paykit.callback"))
}
