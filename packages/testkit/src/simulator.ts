/**
 * `createSimulator`: the in-process fetch handler, the HTTP server and the test controls.
 *
 * @packageDocumentation
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Engine } from "./engine"
import { route } from "./router"
import { enableDashboard } from "./ui/routes"
import { ConnectionReset, fetchFailed } from "./faults"
import { SimError, errorReply, fromWebRequest, toResponse, type SimReply, type SimRequest } from "./replies"
import { exponentOf } from "./auth"
import { orderView } from "./state/orders"
import { testMerchant } from "./fixtures/test-merchant"
import { chargeRecurring } from "./operations/recurring"
import { checkSnapshot, restoreInto, resumeTime, snapshotOf } from "./snapshot"
import type { MerchantConfig, Simulator, SimulatorOptions } from "./types"

/** The default merchant list: the {@link testMerchant}. */
export const testMerchantConfig: MerchantConfig = {
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  endpointIds: [testMerchant.endpointId],
  endpointGroupIds: [testMerchant.endpointGroupId],
  rsaPublicKeyPem: testMerchant.publicKeyPem
}

// Internal access for the testkit's own tests (not exported from the package).
const engines = new WeakMap<Simulator, Engine>()

/** @internal The engine behind a simulator, for whole-state assertions in this package's tests. */
export function engineOf(sim: Simulator): Engine | undefined {
  return engines.get(sim)
}

/**
 * Creates a stateful gateway simulator. Use `sim.fetch` in process (no socket) or `sim.listen()`
 * for real HTTP.
 *
 * With `restore` (a value from {@link Simulator.snapshot}) it continues that simulator's state:
 * orders, ids, pending work, callback log and OAuth nonces. An unknown snapshot version throws.
 *
 * @example
 * const sim = createSimulator({ processingDelayMs: 0 })
 * const res = await sim.fetch(new Request("http://sim/api/v2/sale/1001", { method: "POST", headers, body }))
 * const next = createSimulator({ restore: sim.snapshot() })   // after sim.close(): a restart
 */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const restore = options.restore
  if (restore !== undefined) checkSnapshot(restore)
  const engine = new Engine(
    restore === undefined ? options : { ...options, startTime: resumeTime(restore, options.clock ?? "virtual") },
    [testMerchantConfig]
  )
  engine.recurringCharge = chargeRecurring
  if (restore !== undefined) {
    try {
      restoreInto(engine, restore)
    } catch (error) {
      void engine.clock.close()
      throw error
    }
    if (options.baseUrl === undefined) engine.baseUrl = restore.baseUrl
  }
  if (options.dashboard === true) enableDashboard(engine)
  const servers = new Set<{ close(): Promise<void> }>()

  const fetch = async (request: Request): Promise<Response> => {
    try {
      return toResponse(await loggedRoute(engine, fromWebRequest(request)))
    } catch (error) {
      if (error instanceof ConnectionReset) throw fetchFailed()
      return toResponse(unexpectedFailure())
    }
  }

  const view = (order: Parameters<typeof orderView>[0]) => orderView(order, exponentOf(order.currency))

  const sim: Simulator = {
    fetch,
    async listen(listenOptions = {}) {
      const host = listenOptions.host ?? "127.0.0.1"
      // A bare node:http server: no web Request/Response objects on the hot path.
      const server = createServer((incoming, outgoing) => {
        void serveNode(engine, incoming, outgoing)
      })
      server.keepAliveTimeout = 5_000
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject)
        server.listen(listenOptions.port ?? 0, host, () => resolve())
      })
      const address = server.address() as AddressInfo
      const shownHost = host.includes(":") ? `[${host}]` : host
      const url = `http://${shownHost}:${address.port}`
      engine.baseUrl = url
      const handle = {
        url,
        close: () =>
          new Promise<void>((resolve) => {
            servers.delete(handle)
            server.closeAllConnections()
            server.close(() => resolve())
          })
      }
      servers.add(handle)
      return handle
    },
    clock: {
      now: () => engine.clock.now(),
      advance: (ms) => engine.clock.advance(ms)
    },
    faults: {
      add: (rule) => engine.faults.add(rule),
      clear: () => engine.faults.clear()
    },
    orders: () => engine.store.all().map(view),
    order: (orderid) => {
      const order = engine.store.get(orderid)
      return order === undefined ? undefined : view(order)
    },
    orderByClientOrderId: (clientOrderId) => {
      const order = engine.store.findClientOrderId(clientOrderId)
      return order === undefined ? undefined : view(order)
    },
    checkInvariants: () => engine.checkAllInvariants(),
    callbackAttempts: () => [...engine.callbacks.attempts()],
    requests: {
      entries: (afterSeq) => engine.requests.entries(afterSeq),
      subscribe: (listener) => engine.requests.subscribe(listener)
    },
    snapshot: () => snapshotOf(engine),
    reset: () => engine.reset(),
    close() {
      // Synchronously: from here on nothing changes the state (requests get a dropped connection,
      // no timer runs, callbacks under way are neither logged nor retried), so a snapshot taken
      // just before close() is the last word.
      engine.closed = true
      engine.callbacks.stop()
      const closing = Promise.all([...servers].map((s) => s.close()))
      const stopping = engine.clock.close()
      return Promise.all([closing, stopping]).then(() => undefined)
    }
  }
  engines.set(sim, engine)
  return sim
}

/** Routes one request and records it in the engine's request log (also when the connection drops). */
async function loggedRoute(engine: Engine, request: SimRequest): Promise<SimReply> {
  const started = performance.now()
  let reply: SimReply | undefined
  try {
    reply = await route(engine, request)
    return reply
  } finally {
    engine.requests.record({ method: request.method, url: request.url, reply }, started)
  }
}

/** Serves one Node request: read the body, route, write the reply (or drop the socket). */
async function serveNode(engine: Engine, incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
  const host = incoming.headers.host ?? "localhost"
  const request: SimRequest = {
    method: incoming.method ?? "GET",
    url: `http://${host}${incoming.url ?? "/"}`,
    header: (name) => {
      const value = incoming.headers[name]
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value
    },
    text: () =>
      new Promise<string>((resolve, reject) => {
        let body = ""
        incoming.setEncoding("utf8")
        incoming.on("data", (chunk: string) => (body += chunk))
        incoming.on("end", () => resolve(body))
        incoming.on("error", reject)
      })
  }
  let reply: SimReply
  try {
    reply = await loggedRoute(engine, request)
  } catch (error) {
    if (error instanceof ConnectionReset) {
      // Drop the connection without a reply: the client sees ECONNRESET / "socket hang up".
      incoming.socket.destroy()
      return
    }
    reply = unexpectedFailure()
  }
  // Drain an unread body so keep-alive connections stay usable.
  if (!incoming.complete) incoming.resume()
  const headers: Record<string, string | number> = { "content-type": reply.contentType, "content-length": Buffer.byteLength(reply.body) }
  if (reply.location !== undefined) headers["location"] = reply.location
  outgoing.writeHead(reply.status, headers)
  outgoing.end(reply.body)
}

/**
 * The reply to a failure nothing foresaw (a bug, a page or test route that threw): still the
 * interface's 500 ServerErrorResponse in its media type (spec D8e), never a text/plain body a
 * client cannot decode. The error itself is not shown: it may carry request data.
 */
function unexpectedFailure(): SimReply {
  return errorReply(new SimError("internal-error", "unexpected simulator failure; the request may or may not have been processed"))
}
