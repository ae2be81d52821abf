/**
 * `createSimulator`: the in-process fetch handler, the HTTP server and the test controls.
 *
 * @packageDocumentation
 */
import { Engine } from "../engine/engine"
import { route } from "../server/router"
import { enableDashboard } from "../dashboard/routes"
import { ConnectionReset, fetchFailed } from "../rules/faults"
import { fromWebRequest, toResponse, unexpectedFailure, type SimReply } from "../http/replies"
import { FairUse } from "../http/fair-use"
import { CallbackTargets } from "../callbacks/targets"
import { resolveLimits } from "../http/edge"
import { listenNode } from "../server/node-server"
import { exponentOf } from "../auth/auth"
import { orderView } from "../state/orders"
import { testMerchant } from "../fixtures/test-merchant"
import { chargeRecurring } from "../operations/recurring"
import { checkSnapshot, restoreInto, resumeTime, snapshotOf } from "../snapshot/snapshot"
import type { MerchantConfig } from "../auth/merchant"
import type { Simulator, SimulatorOptions } from "./simulator"

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
  // Settings are checked before anything starts, so a bad one fails here, naming itself, and
  // never the first listen() or delivery.
  resolveLimits(options.limits)
  if (options.callbackTargets !== undefined) new CallbackTargets(options.callbackTargets)
  const fairUse = options.rateLimit === undefined ? undefined : new FairUse(options.rateLimit, () => engine.clock.now())
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

  if (fairUse !== undefined) engine.fairUse = fairUse
  // One log for both transports: the dashboard's ring, and paykit-sim's stdout line through onRequest.
  if (options.onRequest !== undefined) engine.requests.subscribe(options.onRequest)

  // `init.signal` as WHATWG `fetch(input, init)` takes it (docs/decisions.md#20-speed-against-a-careful-hand-written-call):
  // a request aborted before it is handled is never handled; one aborted while it is handled
  // rejects with the signal's reason once the simulator has handled it (as a gateway that received
  // it would have), so the caller sees the abort and the order shows what the request did.
  const fetch = async (request: Request, init?: { readonly signal?: AbortSignal | null | undefined }): Promise<Response> => {
    const signal = init?.signal ?? undefined
    if (aborted(signal)) throw abortReason(signal!)
    const started = performance.now()
    const at = Date.now()
    let reply: SimReply | undefined
    try {
      reply = await route(engine, fromWebRequest(request))
    } catch (error) {
      if (error instanceof ConnectionReset) throw fetchFailed()
      reply = unexpectedFailure()
    } finally {
      engine.requests.add({ at, method: request.method, path: pathOf(request.url), status: reply?.status ?? 0, ms: performance.now() - started }, reply?.body)
    }
    if (aborted(signal)) throw abortReason(signal!)
    return toResponse(reply)
  }

  const view = (order: Parameters<typeof orderView>[0]) => orderView(order, exponentOf(order.currency))

  const sim: Simulator = {
    fetch,
    async listen(listenOptions = {}) {
      const host = listenOptions.host ?? "127.0.0.1"
      const server = await listenNode(engine, options, host, listenOptions.port ?? 0)
      engine.baseUrl = server.url
      const handle = {
        url: server.url,
        close: () => {
          servers.delete(handle)
          return server.close()
        }
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

/** The path of an absolute URL, without its query, without parsing the whole URL. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2)
  if (start < 0) return "/"
  const query = url.indexOf("?", start)
  return url.slice(start, query < 0 ? undefined : query)
}

/** Whether `signal` has fired (a function, so that a check after an `await` reads it afresh). */
function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

/** What an aborted `fetch` rejects with: the signal's reason, or an `AbortError` when it has none. */
function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError")
}
