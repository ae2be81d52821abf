/**
 * The simulator over node:http: a bare server (no web Request/Response objects on the hot path)
 * with deliberate limits. A body over the limit is answered 413 before it is read (by its
 * Content-Length, else by counting the bytes as they stream), headers and whole requests have
 * time limits, and a malformed, truncated or timed-out request gets the gateway's JSON error shape
 * (400, 408, 431), never a 500. Test routes pass the gate of `http-edge.ts` first.
 *
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import type { Engine } from "./engine"
import { route } from "./router"
import { ConnectionReset } from "./faults"
import { SimError, errorBody, errorReply, plainJson, unexpectedFailure, type SimReply, type SimRequest } from "./replies"
import { isCrossSite, isLoopbackHost, isTestRoutePath, resolveLimits, testRouteGate, type GateRefusal, type RequestLimits, type TestRouteAccess } from "./http-edge"
import { isLoopback } from "./net-address"

/** What the node server needs besides the engine. */
export interface NodeServerOptions {
  readonly limits?: RequestLimits | undefined
  readonly testRoutes?: TestRouteAccess | undefined
}

/** A listening server: its URL and how to stop it. */
export interface NodeServerHandle {
  readonly url: string
  close(): Promise<void>
}

/**
 * Sockets whose body is being read, and how to end that read when the request timeout fires: the
 * reply is then a 408 written by the request's own ServerResponse.
 */
const bodyReads = new WeakMap<Socket, (error: SimError) => void>()
/** Sockets whose request ran out of time while no body read was under way. */
const timedOut = new WeakSet<Socket>()

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
      void serveNode(engine, incoming, outgoing, limits.bodyBytes, loopback, options)
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

/**
 * Reads a body of at most `limit` bytes. Rejects with `request-too-large` as soon as the declared
 * length or the bytes received pass it (nothing more is kept), `request-timeout` when the server's
 * request timeout ended it, `malformed-request` when the connection closed before the body ended.
 */
export function readBody(incoming: IncomingMessage, limit: number): Promise<string> {
  const declared = incoming.headers["content-length"]
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit, `Content-Length ${declared}`))
  const socket = incoming.socket
  const timeout = () => new SimError("request-timeout", "body: did not arrive within the request timeout; the request was not processed")
  const truncated = () => new SimError("malformed-request", "body: the connection closed before the whole body arrived; the request was not processed")
  // Already cut off (timed out or closed while the request waited for something else).
  if (incoming.destroyed && !incoming.complete) return Promise.reject(timedOut.has(socket) ? timeout() : truncated())
  return new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const fail = (error: SimError) => {
      if (done) return
      done = true
      chunks.length = 0
      bodyReads.delete(socket)
      incoming.pause()
      reject(error)
    }
    const cut = () => fail(timedOut.has(socket) ? timeout() : truncated())
    bodyReads.set(socket, fail)
    incoming.on("data", (chunk: Buffer) => {
      if (done) return
      size += chunk.length
      if (size > limit) {
        fail(tooLarge(limit, `${size}+ bytes`))
        return
      }
      chunks.push(chunk)
    })
    incoming.once("end", () => {
      if (done) return
      done = true
      bodyReads.delete(socket)
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"))
    })
    incoming.once("error", cut)
    incoming.once("close", () => {
      if (!incoming.complete) cut()
    })
  })
}

function tooLarge(limit: number, what: string): SimError {
  return new SimError("request-too-large", `body: ${what} is over the simulator's limit of ${limit} bytes; the request was not processed`)
}

/** Serves one Node request: gate, read the body (bounded), route, write the reply (or drop the socket). */
async function serveNode(
  engine: Engine,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  bodyLimit: number,
  loopback: boolean,
  options: NodeServerOptions
): Promise<void> {
  const started = performance.now()
  const at = Date.now()
  const rawUrl = incoming.url ?? "/"
  const queryAt = rawUrl.indexOf("?")
  const path = queryAt < 0 ? rawUrl : rawUrl.slice(0, queryAt)
  const request: SimRequest = {
    method: incoming.method ?? "GET",
    url: `http://${incoming.headers.host ?? "localhost"}${rawUrl}`,
    header: (name) => {
      const value = incoming.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value
    },
    text: () => readBody(incoming, bodyLimit)
  }
  let reply: SimReply
  const declared = incoming.headers["content-length"]
  const refusal = isTestRoutePath(path) ? testRouteGate(options.testRoutes, loopback, request.header("authorization")) ?? browserGate(request, options.testRoutes, loopback) : undefined
  if (refusal !== undefined) {
    reply = plainJson({ error: refusal.error }, refusal.status)
  } else if (declared !== undefined && Number(declared) > bodyLimit) {
    // Refused by its declared length before a byte of it is read, whatever the route.
    reply = errorReply(tooLarge(bodyLimit, `Content-Length ${declared}`))
  } else {
    try {
      reply = await route(engine, request)
    } catch (error) {
      if (error instanceof ConnectionReset) {
        // Drop the connection without a reply: the client sees ECONNRESET / "socket hang up".
        incoming.socket.destroy()
        log(engine, incoming, at, path, started, 0, "")
        return
      }
      reply = unexpectedFailure()
    }
  }
  const headers: Record<string, string | number> = { "content-type": reply.contentType, "content-length": Buffer.byteLength(reply.body) }
  if (reply.location !== undefined) headers["location"] = reply.location
  if (reply.retryAfter !== undefined) headers["retry-after"] = reply.retryAfter
  // A body left unread (refused, or not needed by the route) does not keep the connection: reading
  // an unbounded body to reuse it is what a hostile client wants. The reply says close, and the
  // rest of the body is discarded for at most LINGER_MS so the client reads the reply (closing on
  // unread data would reset the connection and lose it).
  if (!incoming.complete) {
    headers["connection"] = "close"
    const socket = incoming.socket
    // node:http calls destroySoon() once a `connection: close` reply is written.
    socket.destroySoon = () => linger(socket)
    incoming.on("data", () => undefined)
    incoming.resume()
  }
  if (!outgoing.destroyed) {
    outgoing.writeHead(reply.status, headers)
    outgoing.end(reply.body)
  }
  log(engine, incoming, at, path, started, reply.status, reply.body)
}

function log(engine: Engine, incoming: IncomingMessage, at: number, path: string, started: number, status: number, body: string): void {
  const remote = incoming.socket.remoteAddress
  engine.requests.add({ at, method: incoming.method ?? "GET", path, status, ms: performance.now() - started, remote }, body)
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
  const reading = bodyReads.get(socket)
  if (reading !== undefined) {
    // The request's handler is waiting for its body: end that wait; the handler answers (408 or 400).
    reading(code === "ERR_HTTP_REQUEST_TIMEOUT"
      ? new SimError("request-timeout", "body: did not arrive within the request timeout; the request was not processed")
      : new SimError("malformed-request", `body: ended before its declared length or broke the HTTP framing (${code || "parse error"}); the request was not processed`))
    return
  }
  if (code === "ERR_HTTP_REQUEST_TIMEOUT") {
    timedOut.add(socket)
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
