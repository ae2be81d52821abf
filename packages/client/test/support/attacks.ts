/**
 * Shared helpers of the attack suites: a simulator per test, clients with
 * ms-scale policies, fault-injecting fetch wrappers and ledger counters read from the simulator.
 */
import { createSimulator, type Simulator } from "@paykit/testkit"
import { Effect, Fiber } from "effect"
import { createPayClient, makePayClient, resolveConfig, StoreError, type PayClientOptions, type PayClientService, type PromisePayClient } from "../../src/index"
import { saleInput } from "./fixtures"
import { BASE_URL, clientOptions } from "./sim"

export type Settled = { ok: true; value: Record<string, unknown> } | { ok: false; error: Record<string, unknown> & { _tag: string; message: string } }
export const settled = (p: Promise<unknown>): Promise<Settled> =>
  p.then((value) => ({ ok: true as const, value: value as Record<string, unknown> }), (error) => ({ ok: false as const, error }))
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export function newSim(options: Parameters<typeof createSimulator>[0] = {}): Simulator {
  return createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL, ...options })
}

/** A client whose fetch passes through `wrap` (default: straight to the simulator). */
export function client(sim: Simulator, extra: Partial<PayClientOptions> = {}): PromisePayClient {
  return createPayClient(clientOptions(sim, {
    timeoutMs: 300,
    deadlineMs: 4000,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4 },
    reconcile: { settleMs: 120, pollIntervalMs: 10 },
    ...extra
  }))
}

/** Which operation a request is for: the path segment before the endpoint id (`sale`, `status`, ...). */
export const opOf = (req: Request): string => {
  const parts = new URL(req.url).pathname.split("/").filter((p) => p !== "" && p !== "group")
  return parts[parts.length - 2] ?? ""
}

/**
 * A fetch that lets the simulator process the request and then replaces the reply for the next
 * `count` requests of operation `op` (path segment) with `reply` (a Response factory, or "reset").
 */
export function afterProcessing(sim: Simulator, op: string, reply: (() => Response) | "reset", count = 1) {
  let left = count
  const seen: Array<string> = []
  const fetch = async (req: Request): Promise<Response> => {
    const name = opOf(req)
    seen.push(name)
    if (name !== op || left <= 0) return sim.fetch(req)
    left--
    await sim.fetch(req)
    if (reply === "reset") throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) })
    return reply()
  }
  return { fetch, seen, count: (name: string) => seen.filter((s) => s === name).length }
}

/** An approved sale or preauth (awaited to final) on `pay`. */
export async function approvedOrder(pay: PromisePayClient, kind: "sale" | "preauth", overrides: Record<string, string> = {}) {
  const input = saleInput(overrides)
  const ack = await pay[kind](input)
  const orderid = ack["paynet-order-id"]!
  const final = await pay.awaitFinal({ client_orderid: input.client_orderid, orderid })
  if (final._tag !== "Final" || final.status !== "approved") throw new Error(`setup: ${kind} not approved`)
  return { client_orderid: input.client_orderid, orderid, input }
}

/** Transactions of `type` on an order that moved or are moving money. */
export function moved(sim: Simulator, orderid: string, type: string): number {
  return (sim.order(orderid)?.transactions ?? []).filter((t) => t.type === type && (t.status === "approved" || t.status === "processing")).length
}

/** Lets a request the simulator still holds land, then runs what fell due. */
export async function letLand(sim: Simulator, ms = 0) {
  if (ms > 0) await sleep(ms)
  await sim.clock.advance(60_000)
}

/**
 * An instance that dies holding a key in the shared `store`: the gateway processes its `op` request
 * (`landed`) or never sees it, its fetch never returns, and its fiber is interrupted once that
 * request has reached its fetch, leaving the intent under a lease of `leaseMs`. It waits for the
 * send itself, not for a time, so a slow machine cannot interrupt the call before it sends.
 */
export async function crashHolding(
  sim: Simulator,
  store: PayClientOptions["store"],
  op: string,
  landed: boolean,
  leaseMs: number,
  call: (instance: PayClientService) => Effect.Effect<unknown, unknown>
): Promise<void> {
  let reached!: () => void
  const sent = new Promise<void>((resolve) => { reached = resolve })
  // The instance dies with its process: after the crash its store calls never happen (a live
  // process that gives up on a call releases its intent instead).
  let crashed = false
  const dying = store === undefined ? undefined : diesWith(store, () => crashed)
  const instance = makePayClient(resolveConfig(clientOptions(sim, {
    store: dying,
    intentLeaseMs: leaseMs,
    // Its call holds the key (and the order) for `leaseMs`: its deadline, with no window beyond it.
    deadlineMs: leaseMs,
    reconcile: { settleMs: 0, pollIntervalMs: 5 },
    timeoutMs: 60_000,
    fetch: async (req) => {
      if (opOf(req) !== op) return sim.fetch(req)
      if (landed) await sim.fetch(req)
      reached()
      return new Promise<Response>(() => undefined)
    }
  })))
  const fiber = Effect.runFork(call(instance))
  await sent
  crashed = true
  await Effect.runPromise(Fiber.interrupt(fiber))
}

/** `store` as a process sees it that dies once `dead()`: every call after that fails, nothing is written. */
function diesWith(store: NonNullable<PayClientOptions["store"]>, dead: () => boolean): NonNullable<PayClientOptions["store"]> {
  const wrapped: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(store)) {
    wrapped[name] = typeof value !== "function"
      ? value
      : (...args: Array<unknown>) => (dead() ? Effect.fail(new StoreError({ method: name, adapter: store.adapter, reason: "the process died" })) : (value as (...a: Array<unknown>) => unknown)(...args))
  }
  return wrapped as unknown as NonNullable<PayClientOptions["store"]>
}
