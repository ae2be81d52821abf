/**
 * An attempt's own abort signal, as a plain object. Each attempt has its own: aborting it
 * aborts the `Request` built with it (and so the fetch), exactly as an `AbortController`'s would.
 *
 * Why not an `AbortController`: a real `AbortSignal` is an `EventTarget`, and linking one into a
 * `Request` costs more than the rest of an in-process attempt's client work (Node's `EventTarget`
 * listener machinery, `setMaxListeners`, and a finalization callback that later removes the
 * listener again). Node's global `fetch` builds its `Request` from the init it is given, and
 * undici's `Request` links any object with `aborted` and `addEventListener` (the WHATWG
 * `AbortSignal` conversion is not strict there, for AbortController polyfills); so where the
 * global `fetch` is Node's own ({@link globalFetchLinksPlainSignals}) and its `Request` links this
 * object ({@link linksPlainSignals}, checked once per `Request` class), the attempt passes it. A
 * replaced global `fetch` (a mock, node-fetch) and an injected `fetch`, which takes the signal
 * beside its `Request` and may hand it to anything, get a real `AbortSignal`.
 *
 * @packageDocumentation
 */

type AbortListener = (this: AttemptSignal, event: { readonly type: "abort"; readonly target: AttemptSignal }) => void

const NO_LISTENERS: ReadonlyArray<AbortListener> = Object.freeze([])

/**
 * The `AbortSignal` shape undici's `Request` reads: `aborted`, `reason`, `addEventListener` and
 * `removeEventListener`; and the `EventEmitter` methods Node's `events.getMaxListeners`,
 * `setMaxListeners` and `getEventListeners` call on a signal that is not an `EventTarget`, so the
 * `Request` does not throw (and catch) an error per request while linking it.
 */
export class AttemptSignal {
  aborted = false
  reason: unknown = undefined
  // One listener (undici's) is the rule; more go to `others`.
  private first: AbortListener | undefined = undefined
  private others: Array<AbortListener> | undefined = undefined

  addEventListener(type: string, listener: AbortListener | null | undefined): void {
    if (type !== "abort" || typeof listener !== "function") return
    if (this.aborted) return
    if (this.first === undefined) this.first = listener
    else if (this.first !== listener && this.others?.includes(listener) !== true) (this.others ??= []).push(listener)
  }

  removeEventListener(type: string, listener: AbortListener | null | undefined): void {
    if (type !== "abort") return
    if (this.first === listener) this.first = this.others?.shift()
    else if (this.others !== undefined) {
      const at = this.others.indexOf(listener as AbortListener)
      if (at >= 0) this.others.splice(at, 1)
    }
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  /** `EventEmitter` shape for Node's `events` helpers (see the class comment). */
  getMaxListeners(): number {
    return Number.POSITIVE_INFINITY
  }

  setMaxListeners(_n: number): void {}

  listeners(type: string): ReadonlyArray<AbortListener> {
    if (type !== "abort" || this.first === undefined) return NO_LISTENERS
    return this.others === undefined ? [this.first] : [this.first, ...this.others]
  }

  /** Aborts once, with the `AbortError` a real `AbortController.abort()` gives; each listener is called once. */
  abort(): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = new DOMException("This operation was aborted", "AbortError")
    const first = this.first
    const others = this.others
    this.first = undefined
    this.others = undefined
    const event = { type: "abort", target: this } as const
    if (first !== undefined) first.call(this, event)
    if (others !== undefined) for (const listener of others) listener.call(this, event)
  }
}

// The `Request` classes probed so far (one in practice: the global one), the last one apart.
const probed = new WeakMap<typeof Request, boolean>()
let lastClass: typeof Request | undefined
let lastLinks = false

/**
 * Whether `RequestClass` links an {@link AttemptSignal}: a `Request` built with one is aborted when
 * it is. Probed once per class; a class that rejects it, or takes it without linking, says `false`.
 */
export function linksPlainSignals(RequestClass: typeof Request): boolean {
  if (RequestClass === lastClass) return lastLinks
  let links = probed.get(RequestClass)
  if (links === undefined) {
    try {
      const probe = new AttemptSignal()
      const request = new RequestClass("http://127.0.0.1/", { signal: probe as unknown as AbortSignal })
      const before = request.signal.aborted
      probe.abort()
      links = !before && request.signal.aborted && probe.listeners("abort").length === 0
    } catch {
      links = false
    }
    probed.set(RequestClass, links)
  }
  lastClass = RequestClass
  lastLinks = links
  return links
}

// Node's global `fetch` is a small function that loads undici's on first use; its source names
// the module. A replaced `fetch` (a test's mock, a polyfill) does not, and gets a real signal.
const NODE_FETCH_SOURCE = "internal/deps/undici/undici"
let lastFetch: unknown
let lastFetchIsNode = false

/**
 * Whether the global `fetch`, as it is now, links an {@link AttemptSignal}: it is Node's own
 * (undici's `fetch`, which makes its `Request` from the init as undici's global `Request` does) and
 * that `Request` links one. Checked once per `fetch` function, so a `fetch` replaced later is seen.
 */
export function globalFetchLinksPlainSignals(): boolean {
  const current = globalThis.fetch
  if (current !== lastFetch) {
    lastFetch = current
    let source = ""
    try {
      source = Function.prototype.toString.call(current)
    } catch {
      // not a function: the send fails as it would have
    }
    lastFetchIsNode = typeof process === "object" && typeof process.versions?.undici === "string" && source.includes(NODE_FETCH_SOURCE)
  }
  return lastFetchIsNode && linksPlainSignals(Request)
}
