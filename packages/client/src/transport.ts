/**
 * Transport: one POST of a form body over openapi-fetch, typed by the contracts' `paths`. It knows
 * nothing of signing, retries or Schemas; it turns a send into `{ status, body }` or a
 * {@link TransportError} that says whether the request may have reached the gateway.
 *
 * @packageDocumentation
 */
import type { paths } from "@paykit/contracts"
import { Effect } from "effect"
import createClient from "openapi-fetch"
import type { FetchLike } from "./config"
import { Timeout, TransportError } from "./errors"

/** A reply as received: HTTP status and the parsed JSON body (or the raw text when it is not JSON). */
export interface RawReply {
  readonly status: number
  readonly body: unknown
  /** `false` when the body was not JSON. */
  readonly json: boolean
}

/** One request for the transport. */
export interface TransportRequest {
  readonly operation: string
  readonly path: string
  readonly endpointId: string
  /** The form fields, as validated (sent in their own order). */
  readonly body: Readonly<Record<string, string>>
  /** The `control` digest, sent as the last form field (control-signed operations). */
  readonly control?: string | undefined
  readonly authorization?: string | undefined
  /** Per-attempt limit; the fetch is aborted when it passes. */
  readonly timeoutMs: number
  /** The caller's signal: aborting it aborts the fetch (a `TransportError` with code `ABORT_ERR`). */
  readonly signal?: AbortSignal | undefined
  /**
   * Told of the fetch as it starts: the promise settles when the fetch itself does, which may be
   * long after an abort or the timeout ended the attempt (a fetch that ignores its signal, such as
   * an in-process one, keeps going). Money calls start their processing window from it.
   */
  readonly onFetch?: ((fetching: Promise<unknown>) => void) | undefined
  /**
   * When given, the caller aborts the fetch on interruption itself (it already has an interruption
   * handler around the whole call): the transport keeps `inFlight.abort` set while the fetch runs
   * instead of registering a canceler of its own, which costs an interruptible region per send.
   */
  readonly inFlight?: InFlight | undefined
}

/** Where the transport leaves the abort of the fetch in flight (see {@link TransportRequest.inFlight}). */
export interface InFlight {
  abort: (() => void) | undefined
}

/** Sends a request; a timeout or the fiber's interruption aborts the fetch. */
export type Transport = (request: TransportRequest) => Effect.Effect<RawReply, TransportError | Timeout>

// openapi-fetch encodes a form body only for this exact Content-Type (with `; charset` it sends JSON).
const FORM = "application/x-www-form-urlencoded"
const ACCEPT = "application/vnd.pay+json"

// Failures that provably happen before any byte of the request leaves the machine.
const NOT_SENT_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH", "UND_ERR_CONNECT_TIMEOUT"])

function errorCode(error: unknown): string {
  let current: unknown = error
  for (let depth = 0; depth < 4 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === "string") return code
    const errors = (current as { errors?: unknown }).errors
    if (Array.isArray(errors) && errors.length > 0) current = errors[0]
    else current = (current as { cause?: unknown }).cause
  }
  return "UNKNOWN"
}

/** Classifies a rejected fetch. Only connect-phase failures count as "not sent". */
export function toTransportError(operation: string, error: unknown): TransportError {
  const code = errorCode(error)
  return new TransportError({
    operation,
    code,
    mayHaveReachedGateway: !NOT_SENT_CODES.has(code),
    reason: error instanceof Error ? error.name : "fetch rejected"
  })
}

// The form encoding of URLSearchParams (WHATWG application/x-www-form-urlencoded), byte for byte,
// without building a URLSearchParams per request: most wire values need no escaping at all.
const FORM_SAFE = /^[A-Za-z0-9*\-._]*$/
const FORM_FIXUP = /[!'()~]|%20/g
const fixup = (s: string): string => (s === "%20" ? "+" : `%${s.charCodeAt(0).toString(16).toUpperCase()}`)

/** One name or value as `URLSearchParams` writes it (a lone surrogate becomes U+FFFD, as there). */
export function formEncode(value: string): string {
  if (FORM_SAFE.test(value)) return value
  let encoded: string
  try {
    encoded = encodeURIComponent(value)
  } catch {
    // A lone surrogate: URLSearchParams's own rule (U+FFFD) decides.
    return new URLSearchParams([["", value]]).toString().slice(1)
  }
  return encoded.replace(FORM_FIXUP, fixup)
}

/** What the transport hands openapi-fetch as the body: the fields and, apart, the control. */
interface FormBody {
  readonly fields: Readonly<Record<string, string>>
  readonly control: string | undefined
}

/** The form body, as `new URLSearchParams({ ...fields, control }).toString()` would write it. */
export function serializeForm(body: FormBody): string {
  let out = ""
  for (const name in body.fields) {
    const value = body.fields[name]
    if (value === undefined) continue
    out += `${out === "" ? "" : "&"}${formEncode(name)}=${formEncode(value)}`
  }
  if (body.control !== undefined) out += `${out === "" ? "" : "&"}control=${formEncode(body.control)}`
  return out
}
const noQuery = (): string => ""
const fillEndpointId = (url: string, params: Record<string, unknown>): string =>
  url.replace("{endpointId}", encodeURIComponent(String(params["endpointId"])))

/**
 * What openapi-fetch builds per request when given this class as its `Request`: the URL and the
 * init, kept as they are. The fetch below makes from them the one `Request` an injected fetch
 * takes, or hands them to the global `fetch` as a hand-written call does; a real `Request` here
 * would be built and then copied once more inside `fetch`.
 */
class PendingRequest {
  readonly url: string
  readonly init: RequestInit
  readonly method: string
  constructor(url: string, init: RequestInit) {
    this.url = url
    this.init = init
    this.method = init.method ?? "GET"
  }
}

/** Builds the transport for a base URL and an optional injected `fetch`. */
export function makeTransport(baseUrl: string, fetchImpl: FetchLike | undefined): Transport {
  const send = fetchImpl === undefined
    ? (request: PendingRequest) => fetch(request.url, request.init)
    : (request: PendingRequest) => fetchImpl(new Request(request.url, request.init))
  const client = createClient<paths>({
    baseUrl,
    Request: PendingRequest as unknown as typeof Request,
    fetch: send as unknown as typeof fetch,
    // Given once here rather than built per request: every body is a form (never JSON, whatever
    // the Content-Type spelling), no operation has a query, and the only path parameter is
    // `endpointId` (validated digits).
    headers: { "Content-Type": FORM, Accept: ACCEPT },
    bodySerializer: serializeForm as never,
    querySerializer: noQuery,
    pathSerializer: fillEndpointId
  })
  // The path is chosen at run time from the operation table; openapi-fetch's per-path typing is
  // enforced by the contracts' generator, so here the call is typed loosely once.
  const post = client.POST as unknown as (
    path: string,
    init: {
      params: { path: { endpointId: number } }
      body: FormBody
      headers: Record<string, string> | undefined
      parseAs: "text"
      signal: AbortSignal
    }
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>

  const exchange = async (request: TransportRequest, signal: AbortSignal): Promise<RawReply> => {
    const result = await post(request.path, {
      params: { path: { endpointId: request.endpointId as unknown as number } },
      body: { fields: request.body, control: request.control },
      headers: request.authorization === undefined ? undefined : { Authorization: request.authorization },
      parseAs: "text",
      signal
    })
    const status = result.response.status
    const raw = status >= 200 && status < 300 ? result.data : result.error
    if (typeof raw !== "string") return { status, body: raw, json: typeof raw === "object" && raw !== null }
    try {
      return { status, body: JSON.parse(raw) as unknown, json: true }
    } catch {
      return { status, body: raw, json: false }
    }
  }

  // One AbortController and one timer per attempt: the per-attempt timeout lives here rather than in
  // an Effect timeout combinator, which would fork a fiber and a clock per call on the hot path.
  return (request) =>
    Effect.async<RawReply, TransportError | Timeout>((resume) => {
      const controller = new AbortController()
      const external = request.signal
      const inFlight = request.inFlight
      let settled = false
      const done = () => {
        settled = true
        clearTimeout(timer)
        external?.removeEventListener("abort", onAbort)
        if (inFlight !== undefined) inFlight.abort = undefined
      }
      // On timeout the caller gets `Timeout` at once, whether or not the fetch honours the abort.
      const timer = setTimeout(() => {
        done()
        controller.abort()
        resume(Effect.fail(new Timeout({ operation: request.operation, timeoutMs: request.timeoutMs })))
      }, request.timeoutMs)
      const fetching = exchange(request, controller.signal)
      request.onFetch?.(fetching)
      fetching.then(
        (reply) => {
          if (settled) return
          done()
          resume(Effect.succeed(reply))
        },
        (error: unknown) => {
          if (settled) return
          done()
          resume(Effect.fail(toTransportError(request.operation, error)))
        }
      )
      const onAbort = () => {
        if (settled) return
        done()
        controller.abort()
        resume(Effect.fail(new TransportError({
          operation: request.operation,
          code: "ABORT_ERR",
          // The request was handed to fetch before the abort: its bytes may have left.
          mayHaveReachedGateway: true,
          reason: "aborted by the caller's signal"
        })))
      }
      external?.addEventListener("abort", onAbort, { once: true })
      // Interruption (e.g. the caller's own timeout) aborts the fetch: through the caller's handler
      // when it has one, else through this canceler.
      const interrupt = () => {
        if (settled) return
        done()
        controller.abort()
      }
      if (inFlight !== undefined) {
        inFlight.abort = interrupt
        return
      }
      return Effect.sync(interrupt)
    })
}
