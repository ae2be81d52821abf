/**
 * Request hooks and the result's last response. The one attempt (`attempt.ts`) reports each send
 * to `onRequest` before it leaves and to `onResponse` when it ends, with a redacted view built here
 * from the operation's id, the path, `client_orderid`, the attempt number, the HTTP status, the
 * duration on the client's clock and the gateway's `serial-number`: never a form field, a header,
 * a key, a digest or the body. A hook that throws or rejects is logged at debug (its error's name
 * only) and never changes the call (docs/decisions.md#23-request-hooks).
 *
 * A call's result carries its {@link LastResponse} (attempts, serial number, HTTP status) beside it,
 * read with {@link lastResponseOf}: the result's own fields are unchanged.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import { scrubText } from "../operations/redact"
import type { CallOperation } from "../operations/table"

/** What a hook learns of an attempt as it is sent: no field value beyond `client_orderid`. */
export interface PayRequestView {
  /** The gateway's operation id, e.g. `"SALE"`, `"STATUS"`, or the name of a `request()` call (e.g. `"loyalty-credit"`). */
  readonly operation: CallOperation
  /** The path sent to, endpoint id in place, e.g. `/api/v2/sale/1001` (no query, no host). */
  readonly path: string
  /** The call's `client_orderid`, or `""` for an operation without one. */
  readonly client_orderid: string
  /** The attempt's number within its call, from 1. */
  readonly attempt: number
}

/** What a hook learns of an attempt as it ends. */
export interface PayResponseView extends PayRequestView {
  /** The reply's HTTP status; `undefined` when no reply came (a timeout, a network error, an abort). */
  readonly status: number | undefined
  /** From send to end, in ms on the client's clock (the fiber's `Clock`; `Date.now()` for the Promise facade). */
  readonly durationMs: number
  /** The gateway's `serial-number` of the reply, when it carries one. */
  readonly serialNumber: string | undefined
  /** The `_tag` of the failure the attempt ended in (`"Timeout"`, `"GatewayServerError"`, …), or `undefined` for a typed reply. */
  readonly error: string | undefined
}

/**
 * Request hooks: called for every attempt of every call (reads, money-moving calls, the `status`
 * lookups that reconcile them), in order. A hook that throws or returns a rejected Promise is
 * ignored (logged at debug); a returned Promise is not awaited.
 */
export interface PayHooks {
  /** Called as an attempt is about to be sent. */
  readonly onRequest?: ((view: PayRequestView) => void | Promise<void>) | undefined
  /** Called as an attempt ends: with the reply, or with the failure that ended it after it was sent. */
  readonly onResponse?: ((view: PayResponseView) => void | Promise<void>) | undefined
}

/** How a call's result was reached: read with {@link lastResponseOf}. */
export interface LastResponse {
  /** Attempts the call sent (its own; a reconciliation's `status` lookups are their own calls). */
  readonly attempts: number
  /** The `serial-number` of the reply the result came from; `undefined` for a reconciled result (its reply was lost). */
  readonly serialNumber: string | undefined
  /** The HTTP status of the call's last reply, or `undefined` when its last attempt got none. */
  readonly httpStatus: number | undefined
}

/**
 * A call's {@link LastResponse}, kept on its result object as a private field: no key of the object
 * shows it (`Object.keys`, `for…in`, `JSON.stringify`, `Reflect.ownKeys`, `structuredClone`, deep
 * equality), and it costs one property added to an object just made, where a `WeakMap` entry per
 * call is an ephemeron the garbage collector must trace on its own. The base class hands `super()`
 * the result itself, so the subclass's field lands on that object (the class is never otherwise built).
 */
class ReturnsTarget {
  constructor(target: object) {
    return target
  }
}
class LastResponseOf extends ReturnsTarget {
  #last: LastResponse
  private constructor(target: object, last: LastResponse) {
    super(target)
    this.#last = last
  }

  static get(target: object): LastResponse | undefined {
    return #last in target ? (target as LastResponseOf).#last : undefined
  }

  static set(target: object, last: LastResponse): void {
    if (#last in target) (target as LastResponseOf).#last = last
    // An object that takes no new property (frozen, sealed) cannot carry it: such a result has none.
    else if (Object.isExtensible(target)) new LastResponseOf(target, last)
  }
}

/**
 * The last response of a call's result: how many attempts it took and the gateway's
 * `serial-number`. `undefined` for a value no call of this client returned (or one replayed from a
 * shared store by another instance).
 *
 * @example
 * const sale = await pay.sale(input)
 * lastResponseOf(sale) // { attempts: 1, serialNumber: "…", httpStatus: 200 }
 */
export function lastResponseOf(result: unknown): LastResponse | undefined {
  return typeof result === "object" && result !== null ? LastResponseOf.get(result) : undefined
}

/** Records a call's last response beside its result (a result that is an object). */
export function setLastResponse(result: unknown, last: LastResponse): void {
  if (typeof result === "object" && result !== null) LastResponseOf.set(result, last)
}

/**
 * The `serial-number` of a reply body, when it has one, scrubbed as every gateway text is (a
 * gateway may echo card data anywhere: docs/decisions.md#8-replies).
 */
export function serialNumberOfBody(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined
  const sn = (body as Record<string, unknown>)["serial-number"]
  return typeof sn === "string" ? scrubText(sn) : typeof sn === "number" ? String(sn) : undefined
}

/** Calls a hook; a throw or a rejection is logged at debug with the hook's name and the error's name only. */
export function callHook<V extends PayRequestView>(name: "onRequest" | "onResponse", hook: (view: V) => void | Promise<void>, view: V): void {
  try {
    const returned = hook(view)
    if (returned !== undefined && typeof (returned as Promise<void>).then === "function") {
      ;(returned as Promise<void>).then(undefined, (error: unknown) => hookFailed(name, view, error))
    }
  } catch (error) {
    hookFailed(name, view, error)
  }
}

function hookFailed(name: string, view: PayRequestView, error: unknown): void {
  // The error's message may carry whatever the hook saw or built: only its name is logged.
  const errorName = error instanceof Error ? error.name : typeof error
  Effect.runFork(Effect.logDebug("paykit: hook failed").pipe(
    Effect.annotateLogs({ hook: name, operation: view.operation, attempt: view.attempt, error: errorName })
  ))
}
