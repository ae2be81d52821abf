/**
 * Shared helpers of the fleet-protocol probes: a fleet of merchant instances tried from outside, as
 * a merchant runs it. Every instance is a client of its own (`createPayClient`, or `makePayClient`
 * for the Effect API) on one shared store, with ms-scale policies inside docs/fleet.md's rules,
 * talking to the in-process simulator through a {@link Wire} that logs every request an instance
 * puts on the wire and can lose, refuse or hold it on the way.
 *
 * The probes judge two things only, both from outside the client:
 *
 * - **money**: what the simulator's ledger holds (captured amounts, approved transactions, orders
 *   charged for one `client_orderid`, forgotten ones included);
 * - **truthfulness**: every answer is checked against the sends that were on the wire before it
 *   was given ({@link Wire.judge}). A success must be backed by money its own key moved; an answer
 *   that says nothing moved (a "not applied" recorded by `recover()`, an `OutcomeUnknown` with
 *   `mayHaveApplied: false`, a refusal or cancellation) must not be contradicted by a send made
 *   before it that moved money. `OutcomeUnknown` that may have applied is always truthful, and so is
 *   a replay of an earlier success or conflict. Error tags are not pinned where the protocol leaves
 *   them open.
 *
 * A scenario ({@link Scenario}) is written once against a {@link Fleet} and run on each store: the
 * memory store and PGlite in the `*.sim.test.ts` files, a PostgreSQL server in the heavy file.
 *
 * @packageDocumentation
 */
import { PGlite } from "@electric-sql/pglite"
import type { Simulator } from "@paykit/testkit"
import { Effect, Either, Fiber } from "effect"
import { afterAll, afterEach, beforeAll, beforeEach, describe, it, vi } from "vitest"
import {
  createPayClient,
  makePayClient,
  openMemoryStore,
  resolveConfig,
  type PayClientOptions,
  type PayClientService,
  type PayStoreHandle,
  type PayStoreService,
  type PromisePayClient,
  type RecoverOptions,
  type RecoverReport
} from "../../src/index"
import { openPgliteStore } from "../../src/store/pglite"
import { approvedOrder, client, newSim, opOf, type Settled } from "../support/attacks"
import { clientOptions } from "../support/sim"

export { opOf, type Settled }

// ---------------------------------------------------------------------------------------------
// Stores and scenarios

/** The shared store as the instances of one fleet see it. */
export interface Fleet {
  /** The store instance `name` opens (its own handle and owner where the adapter allows it). */
  readonly store: (name: string) => Promise<PayStoreService>
}

/** One store's data, opened for a file's tests. */
export interface OpenedStore extends Fleet {
  readonly close: () => Promise<void>
}

/** How a file opens a store kind. */
export type StoreKind = readonly [name: string, open: () => Promise<OpenedStore>]

/** A probe written once and run on every store. */
export interface Scenario {
  readonly title: string
  readonly run: (fleet: Fleet) => Promise<void>
}

/**
 * The memory store (one object, shared by the instances of one process) and PGlite (one database
 * per file, since opening it costs seconds; one store handle per instance on it, each with its own
 * `instanceId`).
 */
export const STORES: ReadonlyArray<StoreKind> = [
  ["memory", async () => {
    const store = await openMemoryStore({ instanceId: "fleet-memory" })
    return { store: async () => store, close: () => store.close() }
  }],
  ["pglite", async () => {
    const db = await PGlite.create()
    return handlesOn((instanceId) => openPgliteStore({ db, instanceId }), () => db.close())
  }]
]

/** A fleet whose instances each open their own store handle on the same data (closed with it). */
export function handlesOn(open: (instanceId: string) => Promise<PayStoreHandle>, closeData: () => Promise<void>): OpenedStore {
  const handles: Array<PayStoreHandle> = []
  let n = 0
  return {
    store: async (name) => {
      const handle = await open(`${name.replace(/[^A-Za-z0-9-]/g, "-")}-${n++}`)
      handles.push(handle)
      return handle
    },
    close: async () => {
      for (const h of handles) await h.close()
      await closeData()
    }
  }
}

/** Registers `scenarios` once per store kind (a `describe` per store, its data opened once). */
export function runScenarios(title: string, scenarios: ReadonlyArray<Scenario>, stores: ReadonlyArray<StoreKind> = STORES): void {
  describe.each(stores)(`${title} (%s store)`, (_name, open) => {
    let opened: OpenedStore
    beforeAll(async () => {
      opened = await open()
    }, 120_000)
    afterAll(() => opened.close())
    for (const s of scenarios) it(s.title, () => s.run(opened))
  })
}

let keys = 0
/** A fresh idempotency key (a file's tests share one store). */
/**
 * A scenario's gateway: a simulator, the wire that logs and judges what reaches it, and an approved
 * order of `kind` with a follow-up's input of `amount` USD on it; the simulator is closed after `body`.
 */
export async function onApprovedOrder<A>(
  kind: "preauth" | "sale",
  amount: string,
  body: (world: { sim: Simulator; wire: Wire; o: Awaited<ReturnType<typeof approvedOrder>>; input: { client_orderid: string; orderid: string; amount: string; currency: string } }) => Promise<A>
): Promise<A> {
  const sim = newSim()
  const wire = new Wire(sim)
  try {
    const o = await approvedOrder(client(sim), kind)
    return await body({ sim, wire, o, input: { client_orderid: o.client_orderid, orderid: o.orderid, amount, currency: "USD" } })
  } finally {
    await sim.close()
  }
}

export const freshKey = (name: string): string => `${name}-${Date.now().toString(36)}-${(keys++).toString(36)}`

// ---------------------------------------------------------------------------------------------
// Policies

/**
 * One fleet's timing, in ms. {@link fleetPolicy} refuses a policy that breaks a rule of
 * docs/fleet.md, so no probe can "find" a double charge by misconfiguring the fleet.
 */
export interface FleetPolicy {
  /** Each attempt's timeout. */
  readonly timeoutMs: number
  /** Each call's deadline (the client's `deadlineMs`). */
  readonly deadlineMs: number
  /** The processing window: the client's `reconcile.settleMs`, and `recover()`'s `settleMs`. */
  readonly windowMs: number
  /** The client's `intentLeaseMs`: above the deadline. */
  readonly leaseMs: number
  /** `recover()`'s `olderThanMs`: at least the deadline. */
  readonly recoverOlderThanMs: number
  /** How long one `recover()` run holds what it claims. */
  readonly recoverLeaseMs: number
  /** Interval between `status` polls while proving. */
  readonly pollMs: number
}

/** A policy, checked against docs/fleet.md's rules (lease above the deadline, recover at least the deadline). */
export function fleetPolicy(policy: FleetPolicy): FleetPolicy {
  if (!(policy.leaseMs > policy.deadlineMs)) throw new Error(`policy: intentLeaseMs (${policy.leaseMs}) must be above deadlineMs (${policy.deadlineMs}) (docs/fleet.md)`)
  if (!(policy.recoverOlderThanMs >= policy.deadlineMs)) throw new Error(`policy: recover olderThanMs (${policy.recoverOlderThanMs}) must be at least deadlineMs (${policy.deadlineMs}) (docs/fleet.md)`)
  if (!(policy.timeoutMs <= policy.deadlineMs)) throw new Error("policy: timeoutMs must not exceed deadlineMs")
  return policy
}

/** The default probe fleet: 200 ms attempts, 600 ms deadline, 300 ms window, 800 ms lease. */
export const POLICY = fleetPolicy({
  timeoutMs: 200,
  deadlineMs: 600,
  windowMs: 300,
  leaseMs: 800,
  recoverOlderThanMs: 600,
  recoverLeaseMs: 1000,
  pollMs: 20
})

/** `recover()`'s options under `policy`: `olderThanMs` at least the deadline, `settleMs` the client's window. */
export function recoverOptions(policy: FleetPolicy = POLICY): RecoverOptions {
  return { olderThanMs: policy.recoverOlderThanMs, leaseMs: policy.recoverLeaseMs, settleMs: policy.windowMs }
}

/** Client options of one fleet instance on the simulator's test merchant, on `store`. */
function instanceOptions(sim: Simulator, store: PayStoreService, fetch: (req: Request) => Promise<Response>, policy: FleetPolicy = POLICY, extra: Partial<PayClientOptions> = {}): PayClientOptions {
  return clientOptions(sim, {
    store,
    fetch,
    timeoutMs: policy.timeoutMs,
    deadlineMs: policy.deadlineMs,
    intentLeaseMs: policy.leaseMs,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4 },
    reconcile: { settleMs: policy.windowMs, pollIntervalMs: policy.pollMs },
    ...extra
  })
}

/** A fleet instance, Promise API. */
export function instance(sim: Simulator, store: PayStoreService, fetch: (req: Request) => Promise<Response>, policy: FleetPolicy = POLICY, extra: Partial<PayClientOptions> = {}): PromisePayClient {
  return createPayClient(instanceOptions(sim, store, fetch, policy, extra))
}

/** A fleet instance, Effect API. */
export function effectInstance(sim: Simulator, store: PayStoreService, fetch: (req: Request) => Promise<Response>, policy: FleetPolicy = POLICY, extra: Partial<PayClientOptions> = {}): PayClientService {
  return makePayClient(resolveConfig(instanceOptions(sim, store, fetch, policy, extra)))
}

/** An Effect call's end as a {@link Settled} (the failure as the Promise facade would reject with it). */
export function settledEffect(effect: Effect.Effect<unknown, unknown>): Promise<Settled> {
  return Effect.runPromise(Effect.either(effect)).then((e): Settled =>
    Either.isRight(e) ? { ok: true, value: e.right as Record<string, unknown> } : { ok: false, error: e.left as Extract<Settled, { ok: false }>["error"] })
}

// ---------------------------------------------------------------------------------------------
// The wire

/**
 * What a {@link Link} does to the next request of an operation. `holdMs`: the network carries the
 * request that long before anything else happens to it. `meanwhile` runs once the fault has
 * happened on the wire and before the instance learns of it (a back-office capture landing, an
 * outage starting).
 */
export type Fault = {
  readonly kind:
    /** The gateway gets the request (after `holdMs`, whoever still waits for it) and answers. */
    | "hold"
    /** The connection drops before the gateway reads the request: nothing processed, no reply. */
    | "reset-before"
    /** The gateway processes the request; the reply is lost. */
    | "reset-after"
    /** The gateway processes the request and the reply never comes (the instance is about to die). */
    | "swallow"
    /** A front server answers 500 without passing the request on. */
    | "http-500"
  readonly holdMs?: number | undefined
  readonly meanwhile?: (() => unknown) | undefined
}

/** One request an instance put on the wire. */
export interface Send {
  /** Order of issue, from 0. */
  readonly seq: number
  /** The operation's path segment (`capture`, `sale`, `status`, ...). */
  readonly op: string
  /** The link (instance) that sent it. */
  readonly by: string
  /** When it was issued, in ms since the wire's first request (the test's clock). */
  readonly at: number
  /** The gateway processed it. */
  reached: boolean
  /** The `serial-number` of the transaction it made (from the gateway's reply, lost or not). */
  serialNumber: string | undefined
}

/** A claim an instance made, with how many requests were on the wire when it made it. */
export interface Claim {
  readonly who: string
  readonly what: { readonly kind: "answer"; readonly answer: Settled } | { readonly kind: "recover"; readonly report: RecoverReport }
  /** Requests issued before the claim was made (`Wire.sends.length` then). */
  readonly mark: number
  /** The links whose sends are the claim's key's (every link when absent). */
  readonly sendsBy: ReadonlyArray<string> | undefined
}

const reset = () => new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) })
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/**
 * The network between the fleet and the gateway: every request of every instance, and what became
 * of the transactions they made. Transaction statuses are remembered as seen, so an order the
 * gateway forgot (retention) still counts.
 */
export class Wire {
  readonly sends: Array<Send> = []
  readonly claims: Array<Claim> = []
  /** When the first request went on the wire: send times are counted from it. */
  private t0: number | undefined
  /** serial-number → the transaction as last seen. */
  private readonly seen = new Map<string, { status: string; type: string; orderid: string; client_orderid: string; amount: string | undefined }>()
  private readonly held = new Set<Promise<unknown>>()

  constructor(readonly sim: Simulator) {}

  /** A link for the instance `name`: its fetch and its faults. */
  link(name: string): Link {
    return new Link(this, name)
  }

  /** Puts a request of `by` on the wire. */
  issue(op: string, by: string): Send {
    this.t0 ??= Date.now()
    const send: Send = { seq: this.sends.length, op, by, at: Date.now() - this.t0, reached: false, serialNumber: undefined }
    this.sends.push(send)
    return send
  }

  /** Passes `req` to the gateway for `send` and notes what it made. */
  async deliver(send: Send, req: Request): Promise<Response> {
    const res = await this.sim.fetch(req)
    send.reached = true
    try {
      const body = (await res.clone().json()) as Record<string, unknown>
      if (typeof body["serial-number"] === "string") send.serialNumber = body["serial-number"]
    } catch {
      // Not a JSON reply: nothing to note.
    }
    this.remember()
    return res
  }

  /** Tracks a held request, so {@link settle} waits for it. */
  track(p: Promise<unknown>): void {
    const tracked: Promise<void> = p.then(() => undefined, () => undefined).finally(() => this.held.delete(tracked))
    this.held.add(tracked)
  }

  /** Notes every transaction the gateway holds now (before retention may forget its order). */
  remember(): void {
    for (const o of this.sim.orders()) {
      for (const t of o.transactions) this.seen.set(t.serialNumber, { status: t.status, type: t.type, orderid: o.orderid, client_orderid: o.client_orderid, amount: t.amount })
    }
  }

  /** Lets every held request land, runs what fell due on the gateway, and notes the result. */
  async settle(): Promise<void> {
    while (this.held.size > 0) await Promise.all([...this.held])
    await this.sim.clock.advance(60_000)
    this.remember()
  }

  /** Whether `send` made a transaction that moved money (approved, or still processing). */
  moved(send: Send): boolean {
    if (!send.reached || send.serialNumber === undefined) return false
    const t = this.seen.get(send.serialNumber)
    return t !== undefined && (t.status === "approved" || t.status === "processing")
  }

  /** Money-moving sends of `op` issued before `before` (every one when absent) by the links `by` (every link when absent). */
  movedSends(op: string, before = Number.POSITIVE_INFINITY, by?: ReadonlyArray<string>): Array<Send> {
    return this.sends.filter((s) => s.op === op && s.seq < before && (by === undefined || by.includes(s.by)) && this.moved(s))
  }

  /** Approved transactions of `type` seen for `client_orderid` (forgotten orders included). */
  approved(client_orderid: string, type: string): Array<{ readonly orderid: string; readonly amount: string | undefined }> {
    return [...this.seen.values()].filter((t) => t.client_orderid === client_orderid && t.type === type && t.status === "approved").map((t) => ({ orderid: t.orderid, amount: t.amount }))
  }

  /**
   * Records `who`'s answer once it comes, with the requests on the wire by then. `sendsBy` names the
   * links whose sends are the answer's key's (default: every link the key's judge counts).
   */
  async answer(who: string, call: Promise<Settled>, sendsBy?: ReadonlyArray<string>): Promise<Settled> {
    const answer = await call
    this.claims.push({ who, what: { kind: "answer", answer }, mark: this.sends.length, sendsBy })
    return answer
  }

  /** Records a `recover()` report once it comes (its intents are the key's of every link the judge counts). */
  async recovered(who: string, run: Promise<RecoverReport>): Promise<RecoverReport> {
    const report = await run
    this.claims.push({ who, what: { kind: "recover", report }, mark: this.sends.length, sendsBy: undefined })
    return report
  }

  /**
   * What the wire contradicts, for money that moves by `op` requests of the links `keyLinks`
   * (default: every link; leave out a back office's): a key whose sends moved money more than once,
   * and every claim the ledger contradicts. Empty when each key moved money at most once and every
   * answer was truthful. A key is known by the links that send it: a claim's `sendsBy`, else
   * `keyLinks` (so one link sends one key in a probe).
   */
  judge(op: string, keyLinks?: ReadonlyArray<string>): Array<string> {
    const lies: Array<string> = []
    const keys = new Map<string, ReadonlyArray<string> | undefined>()
    for (const c of this.claims) keys.set((c.sendsBy ?? keyLinks ?? []).join(" or "), c.sendsBy ?? keyLinks)
    for (const [name, links] of keys) {
      const moved = this.movedSends(op, Number.POSITIVE_INFINITY, links)
      if (moved.length > 1) lies.push(`the key of ${name === "" ? "every instance" : name} moved money ${moved.length} times: ${moved.map((s) => `${s.by}'s ${op} sent at +${s.at} ms`).join(", ")}`)
    }
    for (const c of this.claims) {
      const links = c.sendsBy ?? keyLinks
      const before = this.movedSends(op, c.mark, links)
      const sent = before.map((s) => `${s.by}'s ${op} sent at +${s.at} ms`).join(", ")
      if (c.what.kind === "recover") {
        if (c.what.report.notApplied > 0 && before.length > 0) lies.push(`${c.who}: recorded ${c.what.report.notApplied} not applied, but ${sent} moved money`)
        continue
      }
      const a = c.what.answer
      if (a.ok) {
        if (this.movedSends(op, Number.POSITIVE_INFINITY, links).length === 0) lies.push(`${c.who}: answered ${told(a)}, but no ${op} of ${links === undefined ? "its key" : links.join(" or ")} moved money`)
      } else if (claimsNothingMoved(a) && before.length > 0) {
        lies.push(`${c.who}: answered ${told(a)} (nothing moved), but ${sent} moved money`)
      }
    }
    return lies
  }
}

/** One instance's side of the wire: its `fetch`, and the faults it meets. */
export class Link {
  private readonly faults = new Map<string, Array<Fault>>()
  private readonly down = new Set<string>()

  constructor(private readonly wire: Wire, readonly name: string) {}

  /** The next requests of `op` meet `faults`, one each, in order. */
  next(op: string, ...faults: Array<Fault>): this {
    this.faults.set(op, [...(this.faults.get(op) ?? []), ...faults])
    return this
  }

  /** Every request of `op` is answered 503 by a front server (never reaches the gateway) until {@link up}. */
  outage(op: string): this {
    this.down.add(op)
    return this
  }

  /** Ends the outage of `op`. */
  up(op: string): this {
    this.down.delete(op)
    return this
  }

  readonly fetch = (req: Request): Promise<Response> => {
    const op = opOf(req)
    if (this.down.has(op)) return Promise.resolve(new Response("", { status: 503 }))
    const send = this.wire.issue(op, this.name)
    const fault = this.faults.get(op)?.shift()
    let done!: () => void
    this.wire.track(new Promise<void>((resolve) => {
      done = resolve
    }))
    return this.carry(send, req, fault, done)
  }

  private async carry(send: Send, req: Request, fault: Fault | undefined, done: () => void): Promise<Response> {
    try {
      if ((fault?.holdMs ?? 0) > 0) await sleep(fault!.holdMs!)
      switch (fault?.kind) {
        case undefined:
          return await this.wire.deliver(send, req)
        case "hold": {
          const res = await this.wire.deliver(send, req)
          await fault.meanwhile?.()
          return res
        }
        case "reset-before":
          await fault.meanwhile?.()
          throw reset()
        case "http-500":
          await fault.meanwhile?.()
          return new Response("", { status: 500 })
        case "reset-after":
          await this.wire.deliver(send, req)
          await fault.meanwhile?.()
          throw reset()
        case "swallow":
          await this.wire.deliver(send, req)
          await fault.meanwhile?.()
          done()
          return await new Promise<Response>(() => undefined)
      }
    } finally {
      done()
    }
  }
}

/**
 * An instance that dies once its `op` request has reached the gateway: the gateway processes it,
 * `meanwhile` runs, the reply never comes and the instance's fiber is interrupted (its memory gone
 * with it), leaving its intent in the store under its lease.
 */
export async function crashAfterSend(link: Link, op: string, call: Effect.Effect<unknown, unknown>, meanwhile?: () => unknown): Promise<void> {
  let reached!: () => void
  const sent = new Promise<void>((resolve) => {
    reached = resolve
  })
  link.next(op, {
    kind: "swallow",
    meanwhile: async () => {
      await meanwhile?.()
      reached()
    }
  })
  const fiber = Effect.runFork(call)
  await sent
  await Effect.runPromise(Fiber.interrupt(fiber))
}

// ---------------------------------------------------------------------------------------------
// Answers and money

/** Whether a failed answer says the call moved nothing. */
function claimsNothingMoved(a: Settled): boolean {
  if (a.ok) return false
  const e = a.error
  switch (e._tag) {
    case "OutcomeUnknown":
      return e["mayHaveApplied"] === false
    case "TransportError":
      return e["mayHaveReachedGateway"] === false
    case "ReconcileConflict":
    case "GatewayServerError":
    case "Timeout":
    case "DecodeError":
      return false
    default:
      // A refusal before or by the gateway, a store failure before sending, a cancellation.
      return true
  }
}

/** An answer in a few words, for failure messages. */
export function told(a: Settled): string {
  if (a.ok) return `success (${String(a.value["type"] ?? "reply")})`
  const e = a.error
  if (e._tag === "OutcomeUnknown") return `OutcomeUnknown (${e["mayHaveApplied"] === true ? "may have applied" : "not applied"}, ${String(e["lastError"])})`
  return `${e._tag}: ${e.message}`
}

/**
 * A probe's finding in one line, as an assertion compares it: the money, then what the wire
 * contradicts (`lies` from {@link Wire.judge}; none: "every answer truthful").
 */
export function verdict(money: string, lies: ReadonlyArray<string> = []): string {
  return `${money}; ${lies.length === 0 ? "every answer truthful" : lies.join("; ")}`
}

/** The money of an order in one line: what was captured and by how many approved captures. */
export function capturedLine(sim: Simulator, orderid: string): string {
  const o = sim.order(orderid)
  if (o === undefined) return "order forgotten"
  const captures = o.transactions.filter((t) => t.type === "capture" && t.status === "approved").length
  return `captured ${o.captured} in ${captures} approved capture${captures === 1 ? "" : "s"}`
}

// ---------------------------------------------------------------------------------------------
// A controlled clock that waits for a database server

/** The real `setImmediate`, taken before any test fakes it. */
const realSetImmediate = globalThis.setImmediate

/**
 * The controlled clock of support/test-time.ts, for scenarios whose store is a database server:
 * while `busy()` (a query is on its way to the server or back) the clock stands still and only
 * what is due now runs, so no lease, window or deadline passes while the database works. Between
 * queries it moves to the next timer as soon as nothing else can run, as test-time.ts does.
 * Register once in a `describe`.
 */
export function useTestTimeBetweenQueries(busy: () => boolean): void {
  let running = false
  let lastEnd = 0
  beforeEach(() => {
    vi.useFakeTimers({
      toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "setImmediate", "clearImmediate", "Date", "performance"],
      now: Math.max(Date.now(), lastEnd + 1)
    })
    running = true
    const turn = () => {
      if (!running) return
      if (busy()) vi.advanceTimersByTime(0)
      else if (vi.getTimerCount() > 0) vi.advanceTimersToNextTimer()
      realSetImmediate(turn)
    }
    realSetImmediate(turn)
  })
  afterEach(() => {
    if (!running) return
    running = false
    lastEnd = Date.now()
    vi.useRealTimers()
  })
}
