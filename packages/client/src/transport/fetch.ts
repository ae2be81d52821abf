/**
 * Transport: one POST of a form body over openapi-fetch, typed by the contracts' `paths`. It knows
 * nothing of signing, retries or Schemas; it turns a send into `{ status, body }` or a
 * {@link TransportError} that says whether the request may have reached the gateway.
 *
 * @packageDocumentation
 */
import type { paths } from "@paykit/contracts"
import createClient from "openapi-fetch"
import type { FetchLike } from "../config"
import { AttemptSignal, globalFetchLinksPlainSignals } from "./signal"
import { cancelTimeout, scheduleTimeout, type TimedAttempt } from "./timers"
import { Timeout, TransportError } from "../errors"

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
   * Told of the fetch as it starts; the function it returns is called when the fetch itself
   * settles, which may be long after an abort or the timeout ended the attempt (a fetch that
   * ignores its signal, such as an in-process one, keeps going). Money calls start their
   * processing window from it.
   */
  readonly onFetch?: (() => () => void) | undefined
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

/** How one attempt ended: the reply, or why there is none. */
export type SendResult = RawReply | TransportError | Timeout

/**
 * Starts one attempt; `onDone` is called once with its result, unless the returned function (the
 * interruption: it aborts the fetch) is called first. Every attempt of every call is sent by it
 * (`call/attempt.ts`), so all time out and abort alike.
 */
export type Sender = (request: TransportRequest, onDone: (result: SendResult) => void) => () => void

/** The transport of one client: its sender over one openapi-fetch client. */
interface Transports {
  readonly send: Sender
}

/** Whether a {@link SendResult} is a reply (the errors are tagged classes). */
export const isReply = (result: SendResult): result is RawReply => !("_tag" in result)

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
function toTransportError(operation: string, error: unknown): TransportError {
  const code = errorCode(error)
  return new TransportError({
    operation,
    code,
    mayHaveReachedGateway: !NOT_SENT_CODES.has(code),
    reason: error instanceof Error ? error.name : "fetch rejected"
  })
}

// The form encoding of URLSearchParams (WHATWG application/x-www-form-urlencoded), byte for byte,
// without building a URLSearchParams per request: most wire values need no escaping at all, and
// ASCII is escaped from a table in one pass.
const FORM_FIXUP = /[!'()~]|%20/g
const fixup = (s: string): string => (s === "%20" ? "+" : `%${s.charCodeAt(0).toString(16).toUpperCase()}`)
/** 1 for the ASCII bytes the form encoding leaves as they are: `*-._`, digits and letters. */
const FORM_SAFE_ASCII = new Uint8Array(128)
for (const c of "*-._0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") FORM_SAFE_ASCII[c.charCodeAt(0)] = 1
const PERCENT = Array.from({ length: 128 }, (_, c) => `%${c < 16 ? "0" : ""}${c.toString(16).toUpperCase()}`)

/** Values with non-ASCII characters: UTF-8 percent-encoding by `encodeURIComponent`, then the form's differences. */
function formEncodeUnicode(value: string): string {
  let encoded: string
  try {
    encoded = encodeURIComponent(value)
  } catch {
    // A lone surrogate: URLSearchParams's own rule (U+FFFD) decides.
    return new URLSearchParams([["", value]]).toString().slice(1)
  }
  return encoded.replace(FORM_FIXUP, fixup)
}

/** One name or value as `URLSearchParams` writes it (a lone surrogate becomes U+FFFD, as there). */
export function formEncode(value: string): string {
  let out = ""
  let last = 0
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (c < 128) {
      if (FORM_SAFE_ASCII[c] === 1) continue
    } else {
      return formEncodeUnicode(value)
    }
    if (i > last) out += value.slice(last, i)
    out += c === 32 ? "+" : PERCENT[c]!
    last = i + 1
  }
  if (last === 0) return value
  return last < value.length ? out + value.slice(last) : out
}

/** The form body's parts: the fields and, apart, the control. */
interface FormBody {
  readonly fields: Readonly<Record<string, string>>
  readonly control: string | undefined
}

// `name=` by field name: the names are the contract's (validated input has no others), so they are
// encoded once; a bound keeps an odd caller's ever-new names from growing it.
const encodedNames = new Map<string, string>()
const nameEquals = (name: string): string => {
  let encoded = encodedNames.get(name)
  if (encoded === undefined) {
    encoded = `${formEncode(name)}=`
    if (encodedNames.size < 1024) encodedNames.set(name, encoded)
  }
  return encoded
}

/** The form body, as `new URLSearchParams({ ...fields, control }).toString()` would write it. */
export function serializeForm(body: FormBody): string {
  let out = ""
  const fields = body.fields
  for (const name in fields) {
    const value = fields[name]
    if (value === undefined) continue
    if (out !== "") out += "&"
    out += nameEquals(name) + formEncode(value)
  }
  if (body.control !== undefined) out += (out === "" ? "control=" : "&control=") + formEncode(body.control)
  return out
}
const noQuery = (): string => ""

/**
 * What openapi-fetch builds per request when given this class as its `Request`: the URL and the
 * attempt, kept as they are. The fetch below makes from them the one `Request` an injected fetch
 * takes, or hands URL and init to the global `fetch` as a hand-written call does; a real `Request`
 * here would be built and then copied once more inside `fetch`. The body, headers and signal come
 * prepared with the attempt (`init.paykit`): openapi-fetch would otherwise merge headers into two
 * `Headers` objects per request that the `Request` then copies again.
 */
class PendingRequest {
  readonly url: string
  readonly method: string
  // Declared so that openapi-fetch, which copies the init's unknown keys onto its request, finds it.
  readonly paykit: AttemptInFlight
  constructor(url: string, init: { method?: string; paykit?: AttemptInFlight }) {
    this.url = url
    this.method = init.method ?? "POST"
    this.paykit = init.paykit!
  }
}

/** The init of the attempt's fetch: exactly what a hand-written call passes. */
const initOf = (request: PendingRequest, signal: AbortSignal): RequestInit => {
  const attempt = request.paykit
  return { method: request.method, headers: attempt.headers, body: attempt.form, signal }
}

/** The `Request` an injected fetch takes: method, headers and body; its signal travels beside it. */
const requestOf = (request: PendingRequest): Request => {
  const attempt = request.paykit
  return new Request(request.url, { method: request.method, headers: attempt.headers, body: attempt.form })
}

/**
 * One attempt in flight: its abort, timer and end, as one object with methods rather than a
 * closure each (closures would be a good part of what an attempt allocates). The first of reply, failure,
 * timeout, the caller's abort or interruption ends it; the fetch itself is tracked to its own end.
 * Its abort is its own, never shared: an `AbortController`, or for Node's global `fetch` (whose
 * undici `Request` links one) an {@link AttemptSignal} (see signal.ts); aborting it aborts this
 * attempt's fetch only.
 */
class AttemptInFlight implements TimedAttempt {
  readonly abortion: AttemptSignal | AbortController
  readonly form: string
  readonly headers: Record<string, string>
  settled = false
  // Its place among the attempts waiting for their timeout (timers.ts).
  deadlineAt = 0
  prevTimed: TimedAttempt | undefined = undefined
  nextTimed: TimedAttempt | undefined = undefined
  queued = false
  fetchReturned: (() => void) | undefined = undefined
  onAbort: (() => void) | undefined = undefined
  constructor(readonly request: TransportRequest, readonly onDone: (result: SendResult) => void, plainSignal: boolean) {
    this.abortion = plainSignal ? new AttemptSignal() : new AbortController()
    this.form = serializeForm({ fields: request.body, control: request.control })
    this.headers = request.authorization === undefined ? CONTENT_HEADERS : { ...CONTENT_HEADERS, Authorization: request.authorization }
  }

  get signal(): AbortSignal {
    const abortion = this.abortion
    return (abortion instanceof AttemptSignal ? abortion : abortion.signal) as AbortSignal
  }

  /** Ends the attempt; `false` when it had ended already. */
  private end(): boolean {
    if (this.settled) return false
    this.settled = true
    cancelTimeout(this)
    if (this.onAbort !== undefined) this.request.signal?.removeEventListener("abort", this.onAbort)
    if (this.request.inFlight !== undefined) this.request.inFlight.abort = undefined
    return true
  }

  replied(result: OpenApiResult): void {
    this.fetchReturned?.()
    let reply: RawReply
    try {
      reply = rawReply(result)
    } catch (error) {
      return this.failed(error)
    }
    if (this.end()) this.onDone(reply)
  }

  failed(error: unknown): void {
    this.fetchReturned?.()
    if (this.end()) this.onDone(toTransportError(this.request.operation, error))
  }

  // On timeout the caller gets `Timeout` at once, whether or not the fetch honours the abort.
  timedOut(): void {
    if (!this.end()) return
    this.abortion.abort()
    this.onDone(new Timeout({ operation: this.request.operation, timeoutMs: this.request.timeoutMs }))
  }

  aborted(): void {
    if (!this.end()) return
    this.abortion.abort()
    this.onDone(new TransportError({
      operation: this.request.operation,
      code: "ABORT_ERR",
      // The request was handed to fetch before the abort: its bytes may have left.
      mayHaveReachedGateway: true,
      reason: "aborted by the caller's signal"
    }))
  }

  interrupted(): void {
    if (this.end()) this.abortion.abort()
  }
}

/** What openapi-fetch resolves to (`parseAs: "text"`: the body as text). */
interface OpenApiResult {
  readonly data?: unknown
  readonly error?: unknown
  readonly response: Response
}

/** The reply as the pipeline reads it: the JSON of the body parsed once. */
export function rawReply(result: OpenApiResult): RawReply {
  const status = result.response.status
  const raw = status >= 200 && status < 300 ? result.data : result.error
  if (typeof raw !== "string") return { status, body: raw, json: typeof raw === "object" && raw !== null }
  try {
    return { status, body: JSON.parse(raw) as unknown, json: true }
  } catch {
    return { status, body: raw, json: false }
  }
}

const CONTENT_HEADERS: Record<string, string> = { "Content-Type": FORM, Accept: ACCEPT }

/** Builds the transport (its sender) for a base URL and an optional injected `fetch`. */
export function makeTransports(baseUrl: string, fetchImpl: FetchLike | undefined): Transports {
  // An injected fetch gets the `Request` built here and the attempt's signal beside it, as
  // `fetch(input, init)` takes it (docs/decisions.md#20-speed-against-a-careful-hand-written-call):
  // nothing links the signal into the `Request`, and the fetch receives a real `AbortSignal`. The
  // global `fetch` gets URL and init as a hand-written call passes them; it builds its `Request`
  // from the same undici when it is Node's, which links a plain signal (see signal.ts).
  const fetchOne = fetchImpl === undefined
    ? (request: PendingRequest) => fetch(request.url, initOf(request, request.paykit.signal))
    : (request: PendingRequest) => fetchImpl(requestOf(request), { signal: request.paykit.signal })
  const client = createClient<paths>({
    baseUrl,
    Request: PendingRequest as unknown as typeof Request,
    fetch: fetchOne as unknown as typeof fetch,
    // Every body is a form written by the pipeline (never JSON), no operation has a query, and the
    // only path parameter is `endpointId` (validated digits), filled in below. No `headers` here:
    // they come prepared.
    querySerializer: noQuery
  })
  // The path is chosen at run time from the operation table; openapi-fetch's per-path typing is
  // enforced by the contracts' generator, so here the call is typed loosely once.
  const post = client.POST as unknown as (
    path: string,
    init: { paykit: AttemptInFlight; parseAs: "text" }
  ) => Promise<OpenApiResult>

  // A path with its `{endpointId}` filled in, by path: a client sends to one endpoint (or group)
  // almost always, so the last one is kept.
  const filled = new Map<string, { readonly endpointId: string; readonly path: string }>()
  const pathOf = (path: string, endpointId: string): string => {
    const last = filled.get(path)
    if (last !== undefined && last.endpointId === endpointId) return last.path
    const path2 = path.replace("{endpointId}", encodeURIComponent(endpointId))
    filled.set(path, { endpointId, path: path2 })
    return path2
  }

  // One abort and one timeout per attempt: the per-attempt timeout lives here (on the shared timer
  // of timers.ts) rather than in an Effect timeout combinator, which would fork a fiber and
  // a clock per call on the hot path.
  const send: Sender = (request, onDone) => {
    const attempt = new AttemptInFlight(request, onDone, fetchImpl === undefined && globalFetchLinksPlainSignals())
    scheduleTimeout(attempt, request.timeoutMs)
    const fetching = post(pathOf(request.path, request.endpointId), { paykit: attempt, parseAs: "text" })
    attempt.fetchReturned = request.onFetch?.()
    fetching.then((result) => attempt.replied(result), (error: unknown) => attempt.failed(error))
    const external = request.signal
    if (external !== undefined) {
      attempt.onAbort = () => attempt.aborted()
      external.addEventListener("abort", attempt.onAbort, { once: true })
    }
    const interrupt = (): void => attempt.interrupted()
    if (request.inFlight !== undefined) request.inFlight.abort = interrupt
    return interrupt
  }

  return { send }
}
