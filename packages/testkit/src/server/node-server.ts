/**
 * The simulator over node:http: a bare server (no web Request/Response objects on the hot path)
 * with deliberate limits. A body over the limit is answered 413 before it is read (by its
 * Content-Length, else by counting the bytes as they stream), headers and whole requests have
 * time limits, and a malformed, truncated or timed-out request gets the gateway's JSON error shape
 * (400, 408, 431), never a 500. Test routes pass the gate of `http/edge.ts` first.
 *
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import type { Engine } from "../engine/engine"
import { failure, route, withBody, type Route } from "./router"
import { NodeRequest, bodyReadOn, markTimedOut, tooLarge } from "./node-request"
import { ConnectionReset } from "../rules/faults"
import { SimError, errorBody, errorReply, plainJson, unexpectedFailure, type ReplyFacts, type SimReply, type SimRequest } from "../http/replies"
import { isCrossSite, isLoopbackHost, isTestRoutePath, resolveLimits, testRouteGate, type GateRefusal, type RequestLimits, type TestRouteAccess } from "../http/edge"
import { isLoopback } from "../http/net-address"

/** What the node server needs besides the engine. */
interface NodeServerOptions {
  readonly limits?: RequestLimits | undefined
  readonly testRoutes?: TestRouteAccess | undefined
}

/** A listening server: its URL and how to stop it. */
interface NodeServerHandle {
  readonly url: string
  close(): Promise<void>
}

/** Starts the simulator's HTTP server on `host:port`. */
export async function listenNode(engine: Engine, options: NodeServerOptions, host: string, port: number): Promise<NodeServerHandle> {
  const limits = resolveLimits(options.limits)
  let loopback = false
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      // Node checks both timeouts on this interval (30 s by default, too coarse for short limits).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 2)))
    },
    (incoming, outgoing) => {
      serveNode(engine, incoming, outgoing, limits.bodyBytes, loopback, options)
    }
  )
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket, engine))
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => resolve())
  })
  const address = server.address() as AddressInfo
  loopback = isLoopback(address.address)
  const shownHost = host.includes(":") ? `[${host}]` : host
  return {
    url: `http://${shownHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** Serves one Node request: gate, read the body (bounded), route, write the reply (or drop the socket). */
function serveNode(
  engine: Engine,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  bodyLimit: number,
  loopback: boolean,
  options: NodeServerOptions
): void {
  const started = performance.now()
  const at = Date.now()
  const rawUrl = incoming.url ?? "/"
  const queryAt = rawUrl.indexOf("?")
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt)
  const request = new NodeRequest(incoming, outgoing, engine, incoming.method ?? "GET", bodyLimit, bodyDone, path, at, started)
  const declared = incoming.headers["content-length"]
  const refusal = isTestRoutePath(path) ? testRouteGate(options.testRoutes, loopback, request.header("authorization")) ?? browserGate(request, options.testRoutes, loopback) : undefined
  if (refusal !== undefined) {
    reply(request, plainJson({ error: refusal.error }, refusal.status))
  } else if (declared !== undefined && Number(declared) > bodyLimit) {
    // Refused by its declared length before a byte of it is read, whatever the route.
    reply(request, errorReply(tooLarge(bodyLimit, `Content-Length ${declared}`)))
  } else {
    let routed: SimReply | Promise<SimReply> | undefined
    try {
      routed = route(engine, request, path, queryAt < 0 ? "" : rawUrl.slice(queryAt + 1))
    } catch (error) {
      routed = Promise.reject(error)
    }
    // undefined: an API operation reading its body; bodyDone goes on.
    if (routed !== undefined) answer(request, routed)
  }
}

/** An API operation's body is in (or failed to arrive): the rest of the route, then the reply. */
function bodyDone(request: NodeRequest, r: Route, endpointText: string, text: string | undefined, error: SimError | undefined): void {
  let routed: SimReply | Promise<SimReply>
  try {
    routed = error !== undefined ? failure(error) : withBody(request.engine, r, request, endpointText, text!)
  } catch (thrown) {
    routed = Promise.reject(thrown)
  }
  answer(request, routed)
}

/** Writes a reply now, or once its Promise settles; a dropped connection gets none. */
function answer(request: NodeRequest, routed: SimReply | Promise<SimReply>): void {
  if (routed instanceof Promise) {
    routed.then(
      (done) => reply(request, done),
      (error: unknown) => {
        if (error instanceof ConnectionReset) {
          // Drop the connection without a reply: the client sees ECONNRESET / "socket hang up".
          request.incoming.socket.destroy()
          log(request, 0, "")
          return
        }
        reply(request, unexpectedFailure())
      }
    )
  } else {
    reply(request, routed)
  }
}

/** Writes the reply in one go (status line, headers and body: one socket write), then logs it. */
function reply(request: NodeRequest, answer: SimReply): void {
  const { incoming, outgoing } = request
  const headers: Record<string, string | number> = { "content-type": answer.contentType, "content-length": Buffer.byteLength(answer.body) }
  if (answer.location !== undefined) headers["location"] = answer.location
  if (answer.retryAfter !== undefined) headers["retry-after"] = answer.retryAfter
  // A body left unread (refused, or not needed by the route) does not keep the connection: reading
  // an unbounded body to reuse it is what a hostile client wants. The reply says close, and the
  // rest of the body is discarded for at most LINGER_MS so the client reads the reply (closing on
  // unread data would reset the connection and lose it).
  if (!incoming.complete) {
    headers["connection"] = "close"
    const socket = incoming.socket
    // node:http calls destroySoon() once a `connection: close` reply is written.
    socket.destroySoon = () => linger(socket)
    incoming.on("data", discard)
    incoming.resume()
  }
  if (!outgoing.destroyed) queueWrite(outgoing, answer.status, headers, answer.body)
  log(request, answer.status, answer.body, answer.facts)
}

/**
 * Replies made in one turn of the event loop are written together at its end (its check phase),
 * not each as soon as it is ready. Writing to a loopback or LAN peer that is asleep costs the writer
 * the peer's wake-up inside the write syscall; written in a burst, one wake-up serves the replies
 * that follow it (measured: ~5 µs less CPU per request under 200 connections). A reply waits at
 * most for the rest of the turn that made it; nothing is reordered on a connection (one request at
 * a time per socket). The real `setImmediate` is kept so a test's fake timers cannot hold replies.
 */
const immediate = setImmediate
interface QueuedWrite {
  readonly outgoing: ServerResponse
  readonly status: number
  readonly headers: Record<string, string | number>
  readonly body: string
}
let queued: QueuedWrite[] = []
function queueWrite(outgoing: ServerResponse, status: number, headers: Record<string, string | number>, body: string): void {
  if (queued.length === 0) immediate(flushWrites)
  queued.push({ outgoing, status, headers, body })
}
function flushWrites(): void {
  const writes = queued
  queued = []
  for (const { outgoing, status, headers, body } of writes) {
    if (outgoing.destroyed) continue
    try {
      outgoing.writeHead(status, headers)
      writeBody(outgoing, body)
    } catch {
      // A socket that broke between the reply and this write: the client sees the connection end.
      outgoing.destroy()
    }
  }
}

/**
 * Ends a reply whose head is set with its body, in one socket write. `end(body)` queues the head and
 * body and then an empty chunk on the corked socket, which node:net sends through its writev path
 * (a chunk array and a native copy of both strings); written while corked and uncorked at once, the
 * head and body go out alone through the plain write path, and `end()` has nothing left to send.
 * The bytes on the wire are the same. A response without its socket yet (a pipelined request's) or
 * without a body is ended as usual.
 */
function writeBody(outgoing: ServerResponse, body: string): void {
  const socket = outgoing.socket
  if (socket === null || body.length === 0 || socket.writableCorked !== 0) {
    outgoing.end(body)
    return
  }
  socket.cork()
  outgoing.write(body)
  socket.uncork()
  outgoing.end()
}

function discard(): void {}

function log(request: NodeRequest, status: number, body: string, facts?: ReplyFacts): void {
  request.engine.requests.record(request.at, request.method, request.path, status, performance.now() - request.started, request.incoming.socket.remoteAddress, body, undefined, facts)
}

/** A request node:http could not parse or that ran out of time: the gateway's error shape, then close. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket, engine: Engine): void {
  const code = error.code ?? ""
  if (code === "ECONNRESET" || code === "EPIPE") {
    socket.destroy()
    return
  }
  let status = 400
  let simError: SimError
  const reading = bodyReadOn(socket)
  if (reading !== undefined) {
    // The request's handler is waiting for its body: end that wait; the handler answers (408 or 400).
    reading.fail(code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new SimError("request-timeout", "body: did not arrive within the request timeout; the request was not processed")
      : new SimError("malformed-request", `body: ended before its declared length or broke the HTTP framing (${code || "parse error"}); the request was not processed`))
    return
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    markTimedOut(socket)
    status = 408
    simError = new SimError("request-timeout", "request: the headers or body did not arrive within the simulator's time limits; the request was not processed")
  } else if (code === "HPE_HEADER_OVERFLOW") {
    status = 431
    simError = new SimError("request-too-large", "headers: larger than the simulator accepts (16 KB); the request was not processed")
  } else {
    simError = new SimError("malformed-request", `request: not valid HTTP/1.1 (${code || "parse error"}); the request was not processed`)
  }
  // Only when no reply is under way on this socket (a keep-alive socket may be mid-response).
  const busy = (socket as Socket & { _httpMessage?: unknown })._httpMessage != null
  if (socket.writable && !busy) {
    const body = JSON.stringify(errorBody(simError))
    // The parser is done with this socket: whatever else arrives is discarded while the reply drains.
    socket.removeAllListeners("data")
    socket.on("data", () => undefined)
    socket.write(`HTTP/1.1 ${status} ${STATUS_TEXT[status]}\r\nContent-Type: application/vnd.pay+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
    linger(socket)
    engine.requests.add({ at: Date.now(), method: "-", path: "-", status, errorCode: simError.code, ms: 0, remote: socket.remoteAddress })
  } else {
    socket.destroy()
  }
}

/** How long a closing connection keeps discarding what the client still sends. */
const LINGER_MS = 1_000

/** Ends our side now, reads and discards until the client closes or LINGER_MS passes, then destroys. */
function linger(socket: Socket): void {
  if (socket.destroyed) return
  socket.end()
  socket.resume()
  const timer = setTimeout(() => socket.destroy(), LINGER_MS)
  timer.unref()
  socket.once("close", () => clearTimeout(timer))
  socket.once("end", () => socket.destroy())
}

const STATUS_TEXT: Record<number, string> = { 400: "Bad Request", 408: "Request Timeout", 431: "Request Header Fields Too Large" }

/**
 * Test routes refuse what a web page could send on a developer's behalf: a state-changing request
 * from another site (its Origin), and, on loopback without a token, a Host that is not loopback (DNS
 * rebinding). GETs stay readable to curl and to the dashboard's own page.
 */
function browserGate(request: SimRequest, access: TestRouteAccess | undefined, loopback: boolean): GateRefusal | undefined {
  const host = request.header("host")
  if (request.method !== "GET" && request.method !== "HEAD" && isCrossSite(request.header("origin"), host)) {
    return { status: 403, error: "test routes refuse a request sent by a page of another site (its Origin is not this simulator)" }
  }
  if (loopback && access?.adminToken === undefined && access?.expose !== true && !isLoopbackHost(host)) {
    return { status: 403, error: "on loopback, test routes answer only a loopback Host (localhost, 127.0.0.1, [::1]): this request named another host" }
  }
  return undefined
}
