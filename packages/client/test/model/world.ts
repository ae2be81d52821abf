/**
 * One sequence's world: the simulator behind the model's network, the shared store, N client
 * instances (each on its own link to the store, replaced by a fresh one when it crashes), the calls
 * they run in the background, `recover()` runs, and the book of what was sent, what landed and what
 * every answer said. `check()` holds the invariants; `finish()` lets everything land and recovers.
 *
 * Everything is driven from outside, through the client's public API, as a merchant would: the
 * Promise facade (`createPayClient`) or the Effect service (`makePayClient`) per instance.
 *
 * @packageDocumentation
 */
import { createSimulator, testMerchant, type Simulator } from "@paykit/testkit"
import { Cause, Effect, Exit, Fiber, Logger, LogLevel, Option } from "effect"
import {
  createPayClient,
  makePayClient,
  resolveConfig,
  type PayClientOptions,
  type PayClientService,
  type PromisePayClient,
  type RecoverReport
} from "../../src/index"
import { saleInput } from "../support/fixtures"
import { Book, cents, type VerdictKind } from "./book"
import { Gateway, type FaultKind, type FaultRule } from "./gateway"
import { StoreLink, type Unstall } from "./store-link"
import type { ModelStore } from "./stores"
import type { VirtualTime } from "./virtual-time"

/** The policies of every instance: ms-scale, and within every rule of docs/fleet.md. */
export const POLICY = {
  /** Per-attempt timeout, and the processing window (`settleMs` equal to it). */
  windowMs: 300,
  deadlineMs: 2000,
  /** Longer than the deadline. */
  intentLeaseMs: 3000,
  /** A per-call deadline some calls ask for: longer than the lease (docs/fleet.md says to avoid it; the protocol must still hold). */
  longDeadlineMs: 5000,
  retry: { maxRetries: 2, baseDelayMs: 10, maxDelayMs: 40, jitter: false },
  pollIntervalMs: 50,
  /** `recover()`: `olderThanMs` at least the deadline, `settleMs` the client's window. */
  recover: { olderThanMs: 2000, leaseMs: 1000, settleMs: 300, limit: 100 }
} as const

/**
 * How long the gateway of a world remembers an order after its last transaction, the promise a
 * client's reading of `order-not-found` ("never sent") rests on: 0 when the simulator forgets by
 * count (any order may go at once), its `maxAgeMs` when it forgets by age, forever otherwise. A
 * client that reads `order-not-found` as "never sent" for a send older than this is fooled by it;
 * the client's bound on that age belongs in {@link World.options} beside this.
 */
export function orderMemoryMs(config: WorldConfig): number {
  if (config.maxOrders !== null) return 0
  return config.maxAgeMs ?? Number.POSITIVE_INFINITY
}

/** How long past its deadline a call may take to answer (a poll, a store write in memory). */
export const DEADLINE_SLACK_MS = 100

/** How an instance is driven. */
export type Style = "promise" | "effect"

/** A sequence's configuration. */
export interface WorldConfig {
  /** One entry per instance slot: how its client is called. */
  readonly instances: ReadonlyArray<Style>
  /**
   * The simulator's `retention.maxOrders` (`null`: no limit by count): above it the oldest final
   * orders are forgotten however young they are, so the gateway promises to remember nothing.
   */
  readonly maxOrders: number | null
  /**
   * The simulator's `retention.maxAgeMs` (`null`: no limit by age): a final order is forgotten this
   * long after its last transaction, so the gateway remembers every order at least that long.
   */
  readonly maxAgeMs?: number | null | undefined
  /** `recover()` on a schedule: every this many ms, on the next instance in turn (`null`: only when a step asks). */
  readonly recoverEveryMs?: number | null | undefined
  /** The intent lease (default {@link POLICY}'s): above the deadline, by a little or by a lot. */
  readonly intentLeaseMs?: number | undefined
}

/**
 * Order-creating keys: `s` 0..5, even a preauth of 20.00, odd a sale of 10.00. Orders 0 and 1 are
 * made when the world opens (so calls on existing orders have orders from the first step); the
 * others only by the sequence's own steps (enough new orders for the simulator to forget old ones).
 */
export const SALE_KEYS = 6
/** The orders every sequence starts with. */
export const PRELUDE_ORDERS = 2
/** Keys per order: 0 and 1 the same amount (4.00), 2 another (3.00), 3 a void. */
export const ORDER_KEYS = 4

type OrderKind = "preauth" | "sale"
const kindOf = (s: number): OrderKind => (s % 2 === 1 ? "sale" : "preauth")
const amountOf = (kind: OrderKind) => (kind === "preauth" ? "20.00" : "10.00")

/** What order key `k` of an order of `kind` asks for. */
export function orderCall(kind: OrderKind, k: number): { readonly method: "capture" | "return" | "void"; readonly amount: string | undefined } {
  if (k === 3) return { method: "void", amount: undefined }
  return { method: kind === "preauth" ? "capture" : "return", amount: k === 2 ? "3.00" : "4.00" }
}

interface Instance {
  readonly id: string
  readonly slot: number
  readonly style: Style
  readonly link: StoreLink
  readonly promise?: PromisePayClient | undefined
  readonly effect?: PayClientService | undefined
  dead: boolean
  readonly fibers: Set<Fiber.RuntimeFiber<unknown, unknown>>
  recovering: boolean
  /** What the running `recover()` wrote, as the model read it (checked against its report). */
  readonly tally: { applied: number; notApplied: number }
}

interface Call {
  readonly n: number
  readonly key: string
  readonly instance: Instance
  readonly startSeq: number
  readonly what: string
  /** When it started (virtual ms) and its deadline. */
  readonly startedAt: number
  readonly deadlineMs: number
  ended: boolean
  /** Interrupted by its caller (an Effect interruption): it answers nothing. */
  interrupted: boolean
}

type Outcome = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/** What an answer says, by its `_tag`; `undefined` for an answer a money call must never give. */
export function classify(outcome: Outcome): VerdictKind | undefined {
  if (outcome.ok) return "applied"
  const e = outcome.error as { _tag?: string; mayHaveApplied?: boolean; mayHaveReachedGateway?: boolean }
  switch (e?._tag) {
    case "OutcomeUnknown":
      return e.mayHaveApplied === false ? "notApplied" : "unknown"
    case "ReconcileConflict":
      return "conflict"
    // A refusal of this call's send (a refusal after an unknown outcome is an OutcomeUnknown).
    case "GatewayValidationError":
      return "notApplied"
    // Refused before sending: nothing was sent. The transient failures are here too: a money call
    // whose send may have landed never ends with one (it reconciles), so one means the call failed
    // before its send (its read of the order, say).
    case "Cancelled":
    case "StoreError":
    case "StoreInputError":
    case "InputError":
    case "TransportError":
    case "Timeout":
    case "GatewayServerError":
    case "DecodeError":
      return "nothingSent"
    default:
      return undefined
  }
}

const describe = (outcome: Outcome): string => {
  if (outcome.ok) return "success"
  const e = outcome.error as { _tag?: string; message?: string }
  return e?._tag ?? `defect ${String(e?.message ?? e)}`
}

/**
 * The labels a problem starts with: `[invariant kind]`. Invariant 1, each key moves money at most
 * once (`double-move`); 2, each order's money is what the model's requests moved
 * (`unexplained-money`, `figures`); 3, every call ends applied / not-applied / conflict / unknown,
 * never a wrong one (`no-verdict`, `never-ends`, `applied-without-money`, `not-applied-but-moved`,
 * `nothing-sent-after-send`).
 */
export const problemKind = (problem: string): string => /^\[([^\]]+)\]/.exec(problem)?.[1] ?? problem

/** The world of one sequence. */
export class World {
  readonly book = new Book()
  readonly sim: Simulator
  readonly gateway: Gateway
  private readonly slots: Array<Instance> = []
  private readonly calls: Array<Call> = []
  private generation = 0
  private callCount = 0
  private backOffice: PromisePayClient | undefined
  private backOfficeCount = 0
  readonly recoverReports: Array<RecoverReport> = []
  private readonly salesByCoid = new Map<string, string>()
  /** The intent lease of this world's instances. */
  get leaseMs(): number {
    return this.config.intentLeaseMs ?? POLICY.intentLeaseMs
  }

  /** The `recover()` schedule's timer. */
  private schedule: ReturnType<typeof setInterval> | undefined

  private constructor(
    readonly config: WorldConfig,
    readonly store: ModelStore,
    readonly time: VirtualTime,
    /** Prefix of every key and client_orderid (unique per sequence: a database may be reused). */
    readonly run: string
  ) {
    this.sim = createSimulator({
      processingDelayMs: 0,
      baseUrl: "http://127.0.0.1:4010",
      retention: {
        maxOrders: config.maxOrders ?? Number.POSITIVE_INFINITY,
        maxAgeMs: config.maxAgeMs ?? Number.POSITIVE_INFINITY
      }
    })
    for (let s = 0; s < SALE_KEYS; s++) this.salesByCoid.set(this.coid(s), this.saleKey(s))
    this.gateway = new Gateway(this.sim, this.book, POLICY.windowMs, (op, fields) => {
      if (op === "sale" || op === "preauth") return this.salesByCoid.get(fields.get("client_orderid") ?? "")
      return fields.get("comment") ?? undefined
    })
  }

  /** Opens a world on `store` (begun by the caller) with every instance started. */
  static async open(config: WorldConfig, store: ModelStore, time: VirtualTime, run: string): Promise<World> {
    const world = new World(config, store, time, run)
    for (let slot = 0; slot < config.instances.length; slot++) world.slots.push(await world.newInstance(slot))
    for (let s = 0; s < PRELUDE_ORDERS; s++) world.sale(0, s, false)
    await world.settle()
    if (world.running().length > 0 || world.book.problems.length > 0) throw new Error(`model: the opening orders did not go through: ${world.book.log.join("; ")}`)
    world.book.note("the opening orders are in")
    const every = config.recoverEveryMs
    if (every !== undefined && every !== null) {
      let turn = 0
      world.schedule = setInterval(() => void world.recover(turn++ % config.instances.length), every)
    }
    return world
  }

  coid(s: number): string {
    return `${this.run}-c${s}`
  }

  saleKey(s: number): string {
    return `${this.run}-s${s}`
  }

  orderKey(s: number, k: number): string {
    return `${this.run}-s${s}-k${k}`
  }

  private options(fetch: PayClientOptions["fetch"], store: PayClientOptions["store"]): PayClientOptions {
    return {
      baseUrl: "http://127.0.0.1:4010",
      login: testMerchant.login,
      controlKey: testMerchant.controlKey,
      endpointId: testMerchant.endpointId,
      fetch,
      timeoutMs: POLICY.windowMs,
      deadlineMs: POLICY.deadlineMs,
      retry: POLICY.retry,
      reconcile: { settleMs: POLICY.windowMs, pollIntervalMs: POLICY.pollIntervalMs },
      ...(store === undefined ? {} : { store, intentLeaseMs: this.leaseMs })
    }
  }

  private async newInstance(slot: number): Promise<Instance> {
    const id = `i${slot}.${this.generation++}`
    const style = this.config.instances[slot] ?? "promise"
    const base = await this.store.open(`${this.run}-${id}`)
    const link = new StoreLink(base, this.time, (key, outcome) => this.recoverWrite(id, key, outcome))
    const holder: { dead: boolean } = { dead: false }
    const options = this.options(this.gateway.fetchFor(id, () => holder.dead), link.service)
    const instance: Instance = {
      id, slot, style, link,
      promise: style === "promise" ? createPayClient(options) : undefined,
      effect: style === "effect" ? makePayClient(resolveConfig(options)) : undefined,
      get dead() {
        return holder.dead
      },
      set dead(v: boolean) {
        holder.dead = v
      },
      fibers: new Set(),
      recovering: false,
      tally: { applied: 0, notApplied: 0 }
    }
    this.book.note(`instance ${id} (${style}) started`)
    return instance
  }

  /**
   * A `recordOutcome` asked on `instance`: when it is a `recover()` run's (a not-applied, or a
   * result it reconciled), its verdict about the key. How the store spells those is the one place
   * the model reads the store's own encoding; the run's report is checked against what was read
   * here, so a change of encoding shows as a model error instead of a silence.
   */
  private recoverWrite(instance: string, key: string, outcome: unknown): void {
    if (!key.startsWith(`${this.run}-`)) return
    const o = outcome as { _tag?: string; errorTag?: string; data?: { reason?: unknown } }
    const running = this.slots.find((i) => i.id === instance)
    if (o._tag === "Failed" && o.errorTag === "NotApplied") {
      if (running?.recovering === true) running.tally.notApplied++
      this.book.verdict({ key, kind: "notApplied", source: `recover on ${instance}`, tag: "recover:NotApplied" })
    } else if (o._tag === "Returned" && o.data?.reason === "recover") {
      if (running?.recovering === true) running.tally.applied++
      const v = this.book.verdict({ key, kind: "applied", source: `recover on ${instance}`, tag: "recover:Returned" })
      this.checkApplied(v.key, v.source)
    }
  }

  // ---- commands ---------------------------------------------------------------------------------

  /** A sale or preauth with order-creating key `s` on instance `slot`. */
  sale(slot: number, s: number, long: boolean): void {
    const kind = kindOf(s)
    const input = saleInput({ client_orderid: this.coid(s), amount: amountOf(kind) })
    this.use(this.saleKey(s), "sale", (again, l) => this.sale(again, s, l))
    this.start(slot, this.saleKey(s), `${kind} s${s}`, kind, input, long)
  }

  /** Order key `k` on the order of sale key `s` (skipped while the order does not exist). */
  orderCall(slot: number, s: number, k: number, long: boolean): void {
    const order = this.orderOf(s)
    if (order === undefined) {
      this.book.note(`order key s${s}-k${k}: no order yet, skipped`)
      return
    }
    const { method, amount } = orderCall(kindOf(s), k)
    const key = this.orderKey(s, k)
    this.use(key, "money", (again, l) => this.orderCall(again, s, k, l))
    const input: Record<string, string> = { client_orderid: this.coid(s), orderid: order, comment: key }
    if (amount !== undefined) {
      input["amount"] = amount
      input["currency"] = "USD"
    }
    this.start(slot, key, `${method} ${amount ?? ""} s${s}-k${k}`, method, input, long)
  }

  /** The keys used so far, the most recently used first (what `again` picks from). */
  private readonly used: Array<{ readonly key: string; readonly repeat: (slot: number, long: boolean) => void; readonly target: "sale" | "money" }> = []

  /** The call of the `pick`-th most recently used key, again (with `net` on its first send): a merchant's retry. */
  again(slot: number, pick: number, long: boolean, net: FaultKind | undefined, ms?: number, downMs?: number): void {
    if (this.used.length === 0) return
    const call = this.used[pick % this.used.length]!
    if (net !== undefined) this.fault({ target: call.target, kind: net, count: 1, ms, downMs })
    call.repeat(slot, long)
  }

  private use(key: string, target: "sale" | "money", repeat: (slot: number, long: boolean) => void): void {
    const at = this.used.findIndex((u) => u.key === key)
    if (at >= 0) this.used.splice(at, 1)
    this.used.unshift({ key, target, repeat })
  }

  /** The newest order made under sale key `s`, as the merchant knows it (from the gateway). */
  private orderOf(s: number): string | undefined {
    let found: string | undefined
    for (const o of this.book.orders.values()) if (o.client_orderid === this.coid(s)) found = o.orderid
    const live = this.sim.orderByClientOrderId(this.coid(s))
    return live?.orderid ?? found
  }

  /**
   * A capture (preauth) or return (sale) of 3.00 made in the back office: a client without a store,
   * its own key each time, run in the background like every call.
   */
  backOfficeCall(s: number): void {
    const order = this.sim.orderByClientOrderId(this.coid(s))
    if (order === undefined) return
    // The back office is the gateway's own: the merchant's network faults never reach it.
    this.backOffice ??= createPayClient(this.options(this.gateway.fetchFor("back-office", () => false, false), undefined))
    const key = `${this.run}-bo${this.backOfficeCount++}`
    const method = kindOf(s) === "preauth" ? "capture" : "return"
    this.book.note(`back office ${method} 3.00 on s${s} key=${key}`)
    void this.backOffice[method]({ client_orderid: this.coid(s), orderid: order.orderid, amount: "3.00", currency: "USD", comment: key }, { idempotencyKey: key })
      .then((value): Outcome => ({ ok: true, value }), (error): Outcome => ({ ok: false, error }))
      .then((outcome) => this.book.note(`back office ${key}: ${describe(outcome)}`))
  }

  private start(slot: number, key: string, what: string, method: string, input: Record<string, string>, long: boolean): void {
    const instance = this.slots[slot]!
    const call: Call = {
      n: ++this.callCount, key, instance, startSeq: this.book.next(), what, ended: false, interrupted: false,
      startedAt: Date.now(), deadlineMs: long ? POLICY.longDeadlineMs : POLICY.deadlineMs
    }
    this.calls.push(call)
    this.book.note(`call#${call.n} ${what} key=${key} on ${instance.id}${long ? " (deadline 5000)" : ""}`)
    const options = { idempotencyKey: key, ...(long ? { deadlineMs: POLICY.longDeadlineMs } : {}) }
    let answer: Promise<Outcome>
    if (instance.promise !== undefined) {
      const m = (instance.promise as unknown as Record<string, (i: unknown, o: unknown) => Promise<unknown>>)[method]!
      answer = m(input, options).then((value): Outcome => ({ ok: true, value }), (error): Outcome => ({ ok: false, error }))
    } else {
      const m = (instance.effect as unknown as Record<string, (i: unknown, o: unknown) => Effect.Effect<unknown, unknown>>)[method]!
      // The client's own warnings (an interrupted call) are the model's noise, not its output.
      const fiber = Effect.runFork(Logger.withMinimumLogLevel(m(input, options), LogLevel.None))
      instance.fibers.add(fiber)
      answer = Effect.runPromise(Fiber.await(fiber)).then((exit): Outcome => {
        instance.fibers.delete(fiber)
        if (Exit.isSuccess(exit)) return { ok: true, value: exit.value }
        const failure = Cause.failureOption(exit.cause)
        if (Option.isSome(failure)) return { ok: false, error: failure.value }
        if (Cause.isInterruptedOnly(exit.cause)) call.interrupted = true
        return { ok: false, error: new Error(Cause.pretty(exit.cause)) }
      })
    }
    void answer.then((outcome) => this.answered(call, outcome))
  }

  private answered(call: Call, outcome: Outcome): void {
    // A dead instance answers nobody; an interrupted call's caller is gone.
    if (call.instance.dead || call.interrupted) {
      call.ended = true
      return
    }
    call.ended = true
    const kind = classify(outcome)
    const source = `call#${call.n} (${call.what}) on ${call.instance.id}`
    const took = Date.now() - call.startedAt
    if (took > call.deadlineMs + DEADLINE_SLACK_MS) {
      this.book.problems.push(`[3 outlives-deadline] ${source} answered ${describe(outcome)} ${took} ms after it started (deadline ${call.deadlineMs} ms)`)
    }
    if (kind === undefined) {
      this.book.note(`call#${call.n} answered ${describe(outcome)}`)
      this.book.problems.push(`[3 no-verdict] ${source} ended with ${describe(outcome)}, none of applied / not-applied / conflict / unknown`)
      return
    }
    const ownSends = this.book.sends.filter((s) => s.key === call.key && s.instance === call.instance.id && s.seq > call.startSeq).length
    const v = this.book.verdict({ key: call.key, kind, source, tag: describe(outcome), ownSends })
    if (kind === "applied") this.checkApplied(v.key, source)
    if (kind === "nothingSent" && ownSends > 0) {
      this.book.problems.push(`[3 nothing-sent-after-send] ${source} answered ${v.tag}, which says nothing was sent, after sending ${ownSends} request(s) of key ${call.key}`)
    }
  }

  /** A success: the key's own money must have moved by now. */
  checkApplied(key: string, source: string): void {
    if (this.book.moneyOf(key).length === 0) {
      this.book.problems.push(`[3 applied-without-money${source.startsWith("recover") ? " (recover)" : ""}] ${source} answered applied for key ${key}, but no request of that key has moved money`)
    }
  }

  /** `recover()` on instance `slot`, in the background (one run per instance at a time); its report, when it ends. */
  recover(slot: number): Promise<RecoverReport | undefined> {
    const instance = this.slots[slot]!
    if (instance.recovering) return Promise.resolve(undefined)
    instance.recovering = true
    instance.tally.applied = 0
    instance.tally.notApplied = 0
    this.book.note(`recover on ${instance.id}`)
    const options = POLICY.recover
    const report = instance.promise !== undefined
      ? instance.promise.recover(options)
      : Effect.runPromise(Logger.withMinimumLogLevel(instance.effect!.recover(options), LogLevel.None))
    return report.then(
      (r) => {
        instance.recovering = false
        if (instance.dead) return undefined
        this.recoverReports.push(r)
        this.book.note(`recover on ${instance.id}: claimed ${r.claimed}, applied ${r.applied}, notApplied ${r.notApplied}, unresolved ${r.unresolved}`)
        if (r.applied !== instance.tally.applied || r.notApplied !== instance.tally.notApplied) {
          this.book.problems.push(`[model] recover on ${instance.id} reported applied ${r.applied}, notApplied ${r.notApplied}; the model read applied ${instance.tally.applied}, notApplied ${instance.tally.notApplied} from its writes (world.ts recoverWrite reads the store's encoding of outcomes)`)
        }
        return r
      },
      (e: unknown) => {
        instance.recovering = false
        this.book.note(`recover on ${instance.id} failed: ${(e as { _tag?: string })._tag ?? String(e)}`)
        return undefined
      }
    )
  }

  /** The instance dies (SIGKILL): nothing it sends leaves, nothing reaches it; a fresh instance takes its slot. */
  async crash(slot: number): Promise<void> {
    const old = this.slots[slot]!
    old.dead = true
    old.link.kill()
    for (const c of this.calls) if (c.instance === old && !c.ended) c.ended = true
    this.book.note(`crash ${old.id}`)
    this.slots[slot] = await this.newInstance(slot)
  }

  /** The caller interrupts the instance's running calls (an Effect instance; a Promise one has no handle). */
  interrupt(slot: number): void {
    const instance = this.slots[slot]!
    if (instance.fibers.size === 0) return
    this.book.note(`interrupt ${instance.fibers.size} call(s) on ${instance.id}`)
    for (const fiber of instance.fibers) Effect.runFork(Fiber.interrupt(fiber))
  }

  stall(slot: number): void {
    const instance = this.slots[slot]!
    this.book.note(`store stalls for ${instance.id}`)
    instance.link.stallNow()
  }

  unstall(slot: number, how: Unstall): void {
    const instance = this.slots[slot]!
    if (!instance.link.stalled) return
    this.book.note(`store answers ${instance.id} again (${how}, ${instance.link.held} held)`)
    instance.link.unstall(how)
  }

  fault(rule: FaultRule): void {
    this.book.note(`fault: next ${rule.count} ${rule.target} request(s) ${rule.kind}${rule.kind === "hold" && rule.ms !== undefined ? ` ${rule.ms}ms` : ""}${rule.downMs === undefined ? "" : `, then status down ${rule.downMs}ms`}`)
    this.gateway.addRule({ ...rule })
  }

  statusDown(ms: number): void {
    this.book.note(`status down for ${ms} ms`)
    this.gateway.statusDownUntil = Date.now() + ms
  }

  async advance(ms: number): Promise<void> {
    this.book.note(`advance ${ms} ms`)
    await this.time.advance(ms)
  }

  /** Runs what can run without time passing, and refreshes the book's orders. */
  async settle(): Promise<void> {
    await this.time.drain()
    await this.gateway.refresh()
  }

  // ---- invariants -------------------------------------------------------------------------------

  /** Every invariant, now; the problems found (empty when all hold). */
  check(): Array<string> {
    const problems = [...this.book.problems]
    const book = this.book
    for (const key of book.keys()) {
      // 1. Each idempotency key moves money at most once.
      const money = book.moneyOf(key)
      if (money.length > 1) {
        const answers = book.verdicts.filter((v) => v.key === key).map((v) => `${v.tag}${v.source.startsWith("recover") ? " (recover)" : ""}`)
        problems.push(`[1 double-move] key ${key} moved money ${money.length} times (${money.map((m) => `${m.send.operation} by ${m.send.instance} send #${m.send.seq} on ${m.orderid}, ${m.status}`).join("; ")}); its answers: ${answers.join(", ") || "none"}`)
      }
      // 3. An answer "not applied" is wrong when a send of its key made before it moved money (now or later).
      for (const v of book.verdicts) {
        if (v.key !== key || v.kind !== "notApplied") continue
        const earlier = money.filter((m) => m.send.seq < v.seq)
        if (earlier.length > 0) {
          problems.push(`[3 not-applied-but-moved${v.source.startsWith("recover") ? " (recover)" : ""}] ${v.source} answered not-applied (${v.tag}) at #${v.seq} for key ${key}, but its send #${earlier[0]!.send.seq} by ${earlier[0]!.send.instance} moved money on ${earlier[0]!.orderid}`)
        }
      }
    }
    // 3. Every call ends, within its deadline (and a poll's slack): the caller is answered.
    const now = Date.now()
    for (const c of this.calls) {
      if (c.ended || now <= c.startedAt + c.deadlineMs + DEADLINE_SLACK_MS) continue
      problems.push(`[3 outlives-deadline] call#${c.n} (${c.what}) on ${c.instance.id} has not answered ${now - c.startedAt} ms after it started (deadline ${c.deadlineMs} ms)`)
    }
    // 2. Each order's money is what its keys' requests moved: every transaction that moved money was
    //    made by a request of a known key (one of the model's calls, the back office, the order's
    //    creation), and the captured figure is the sum of what those requests captured.
    for (const order of book.orders.values()) {
      let captured = 0
      for (const tx of order.transactions) {
        if (tx.status !== "approved" && tx.status !== "processing") continue
        if (!book.bySerial.has(tx.serialNumber)) {
          problems.push(`[2 unexplained-money] order ${order.orderid} (${order.client_orderid}) has a ${tx.type} ${tx.amount ?? ""} ${tx.status} that no request of the model made`)
        }
        if (tx.status === "approved" && (tx.type === "capture" || tx.type === "sale")) captured += cents(tx.amount)
      }
      if (captured !== cents(order.captured)) {
        problems.push(`[2 figures] order ${order.orderid} captured ${order.captured}, its approved sale and captures add up to ${(captured / 100).toFixed(2)}`)
      }
    }
    return problems
  }

  /** Calls still running on live instances. */
  running(): Array<string> {
    return this.calls.filter((c) => !c.ended).map((c) => `call#${c.n} (${c.what}) on ${c.instance.id}`)
  }

  /**
   * Lets everything land: the store answers again, the network heals, held requests land, every
   * call ends; then a fresh instance runs `recover()` until nothing unfinished is left to claim.
   */
  async finish(): Promise<Array<string>> {
    if (this.schedule !== undefined) clearInterval(this.schedule)
    this.schedule = undefined
    for (const instance of this.slots) if (instance.link.stalled) instance.link.unstall("ok")
    this.gateway.clearFaults()
    this.book.note("finish: store and network healed")
    for (let i = 0; i < 20 && (this.running().length > 0 || this.gateway.holding > 0); i++) await this.time.advance(1000)
    await this.settle()
    const hung = this.running()
    const problems: Array<string> = []
    if (hung.length > 0) problems.push(`[3 never-ends] ${hung.join(", ")} never answered once the store and the network were healed`)
    // The final recovery, after every lease and the recover threshold have passed.
    const slot = this.slots.length
    this.slots.push(await this.newInstance(slot))
    for (let pass = 0; pass < 6; pass++) {
      await this.time.advance(Math.max(this.leaseMs, POLICY.longDeadlineMs) + POLICY.recover.olderThanMs)
      let report: RecoverReport | undefined
      let done = false
      void this.recover(slot).then((r) => {
        report = r
        done = true
      })
      await this.settle()
      for (let i = 0; i < 20 && !done; i++) await this.time.advance(500)
      if (!done) {
        problems.push(`[3 never-ends] the final recover() did not end once the store and the network were healed`)
        break
      }
      if (report === undefined || report.claimed === 0) break
    }
    await this.settle()
    return problems
  }

  async close(): Promise<void> {
    if (this.schedule !== undefined) clearInterval(this.schedule)
    for (const instance of this.slots) {
      instance.dead = true
      instance.link.kill()
    }
    await this.sim.close()
  }
}
