/**
 * A Node request as the router reads it, and its one bounded body read. One object per request
 * holds both: the stream's listeners are shared functions that find it on the IncomingMessage, and
 * an API operation's body goes straight on to the router (`deferBody`) without a Promise, closure
 * or microtask; pages and test routes get the body as a Promise (`text()`).
 *
 * @packageDocumentation
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { SimError } from "../http/replies"
import type { BodyDeferringRequest, Route } from "./router"
import type { Engine } from "../engine/engine"

/**
 * On a socket whose body is being read: that read, so a request timeout can end it (the reply is
 * then a 408 written by the request's own ServerResponse). A property, not a WeakMap: it is set and
 * cleared on every request.
 */
const SOCKET_READ = Symbol("paykit.socketBodyRead")
type ReadingSocket = Socket & { [SOCKET_READ]?: NodeRequest | undefined }
/** Sockets whose request ran out of time while no body read was under way. */
const timedOut = new WeakSet<Socket>()

/** Marks a socket whose request ran out of time while no body read was under way. */
export function markTimedOut(socket: Socket): void {
  timedOut.add(socket)
}

/** The request whose body is being read on `socket`, if any. */
export function bodyReadOn(socket: Socket): NodeRequest | undefined {
  return (socket as ReadingSocket)[SOCKET_READ]
}

const REQUEST = Symbol("paykit.nodeRequest")
type Reading = IncomingMessage & { [REQUEST]?: NodeRequest }

/** Where an API request's body goes once it is in (node-server.ts): one function for every request. */
type BodyDone = (request: NodeRequest, route: Route, endpointText: string, text: string | undefined, error: SimError | undefined) => void

/** A Node request: no closures per request, the URL built only when asked, the body read once. */
export class NodeRequest implements BodyDeferringRequest {
  private chunk: Buffer | undefined = undefined
  private chunks: Buffer[] | undefined = undefined
  private size = 0
  private started_ = false
  private done = false
  private body: Promise<string> | undefined = undefined
  private resolve: ((text: string) => void) | undefined = undefined
  private reject: ((error: SimError) => void) | undefined = undefined
  private route: Route | undefined = undefined
  private endpointText = ""

  constructor(
    readonly incoming: IncomingMessage,
    readonly outgoing: ServerResponse,
    readonly engine: Engine,
    readonly method: string,
    private readonly bodyLimit: number,
    private readonly bodyDone: BodyDone,
    /** What the log records: the path, when the request came (epoch ms) and its performance.now(). */
    readonly path: string,
    readonly at: number,
    readonly started: number
  ) {}

  /** Absolute URL as the client addressed it (OAuth signs it; the router needs only the path). */
  get url(): string {
    return `http://${this.incoming.headers.host ?? "localhost"}${this.incoming.url ?? "/"}`
  }

  header(name: string): string | null {
    const value = this.incoming.headers[name]
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value
  }

  /** The body, read once (a second call gets the same read: the stream can be consumed only once). */
  text(): Promise<string> {
    if (this.body === undefined) {
      this.body = new Promise<string>((resolve, reject) => {
        this.resolve = resolve
        this.reject = reject
      })
      this.read()
    }
    return this.body
  }

  /** Reads the body for the router's `route`; the server's {@link BodyDone} gets the text or the failure. */
  deferBody(route: Route, endpointText: string): void {
    this.route = route
    this.endpointText = endpointText
    this.read()
  }

  /**
   * Starts the read, bounded: `request-too-large` as soon as the declared length or the bytes
   * received pass the limit (nothing more is kept), `request-timeout` when the server's request
   * timeout ended it, `malformed-request` when the connection closed before the body ended.
   */
  private read(): void {
    if (this.started_) return
    this.started_ = true
    const incoming = this.incoming
    const declared = incoming.headers["content-length"]
    if (declared !== undefined && Number(declared) > this.bodyLimit) {
      this.finish(undefined, tooLarge(this.bodyLimit, `Content-Length ${declared}`))
      return
    }
    const socket = incoming.socket as ReadingSocket
    // Already cut off (timed out or closed while the request waited for something else).
    if (incoming.destroyed && !incoming.complete) {
      this.finish(undefined, timedOut.has(socket) ? bodyTimeout() : bodyTruncated())
      return
    }
    ;(incoming as Reading)[REQUEST] = this
    socket[SOCKET_READ] = this
    incoming.on("data", onBodyData)
    incoming.on("end", onBodyEnd)
    incoming.on("error", onBodyError)
    incoming.on("close", onBodyClose)
  }

  /** Ends the read with `error` (once; later data and events are ignored). */
  fail(error: SimError): void {
    if (this.done) return
    this.done = true
    this.chunk = undefined
    this.chunks = undefined
    ;(this.incoming.socket as ReadingSocket)[SOCKET_READ] = undefined
    this.incoming.pause()
    this.finish(undefined, error)
  }

  /** @internal A chunk of the body (the shared 'data' listener). */
  data(chunk: Buffer): void {
    if (this.done) return
    this.size += chunk.length
    if (this.size > this.bodyLimit) {
      this.fail(tooLarge(this.bodyLimit, `${this.size}+ bytes`))
      return
    }
    // Most bodies arrive in one chunk: no array for them.
    if (this.chunk === undefined && this.chunks === undefined) this.chunk = chunk
    else if (this.chunks === undefined) this.chunks = [this.chunk!, chunk]
    else this.chunks.push(chunk)
  }

  /** @internal The body is complete (the shared 'end' listener). */
  end(): void {
    if (this.done) return
    this.done = true
    ;(this.incoming.socket as ReadingSocket)[SOCKET_READ] = undefined
    const text = this.chunks !== undefined ? Buffer.concat(this.chunks).toString("utf8") : this.chunk === undefined ? "" : this.chunk.toString("utf8")
    this.chunk = undefined
    this.chunks = undefined
    this.finish(text, undefined)
  }

  /** @internal The stream broke or closed early. */
  cut(): void {
    this.fail(timedOut.has(this.incoming.socket) ? bodyTimeout() : bodyTruncated())
  }

  private finish(text: string | undefined, error: SimError | undefined): void {
    if (this.route !== undefined) {
      const route = this.route
      this.route = undefined
      this.bodyDone(this, route, this.endpointText, text, error)
    } else if (error === undefined) this.resolve!(text!)
    else this.reject!(error)
  }
}

// Listeners shared by every request (no closures per request): `this` is the IncomingMessage.
function onBodyData(this: Reading, chunk: Buffer): void {
  this[REQUEST]!.data(chunk)
}
function onBodyEnd(this: Reading): void {
  this[REQUEST]!.end()
}
function onBodyError(this: Reading): void {
  this[REQUEST]!.cut()
}
function onBodyClose(this: Reading): void {
  if (!this.complete) this[REQUEST]!.cut()
}

const bodyTimeout = () => new SimError("request-timeout", "body: did not arrive within the request timeout; the request was not processed")
const bodyTruncated = () => new SimError("malformed-request", "body: the connection closed before the whole body arrived; the request was not processed")

/** The refusal of a body over the limit. */
export function tooLarge(limit: number, what: string): SimError {
  return new SimError("request-too-large", `body: ${what} is over the simulator's limit of ${limit} bytes; the request was not processed`)
}
