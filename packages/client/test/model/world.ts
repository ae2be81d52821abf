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
import { Book } from "./book"
import { classify, describe, type Outcome } from "./answers"
import { amountOf, kindOf, orderCall, orderMemoryMs, POLICY, PRELUDE_ORDERS, SALE_KEYS, type Style, type WorldConfig } from "./config"
import { checkInvariants, DEADLINE_SLACK_MS } from "./invariants"
import { Gateway, type FaultKind, type FaultRule } from "./gateway"
import { StoreLink, type Unstall } from "./store-link"
import type { ModelStore } from "./stores"
import type { VirtualTime } from "./virtual-time"

// One simulator per retention policy, reset between sequences: building one parses the test
// merchant's key and costs more than a short sequence.
const simulators = new Map<string, Simulator>()
function simulatorFor(config: WorldConfig): Simulator {
  const retention = { maxOrders: config.maxOrders ?? Number.POSITIVE_INFINITY, maxAgeMs: config.maxAgeMs ?? Number.POSITIVE_INFINITY }
  const id = `${retention.maxOrders}/${retention.maxAgeMs}`
  let sim = simulators.get(id)
  if (sim === undefined) simulators.set(id, sim = createSimulator({ processingDelayMs: 0, baseUrl: "http://127.0.0.1:4010", retention }))
  return sim
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

/** A call's own network fault: for its key's next send, with `status` down from it for `downMs`. */
export interface NetFault {
  readonly kind: FaultKind
  readonly ms?: number | undefined
  readonly downMs?: number | undefined
}

/**
 * What the back office captures or returns: no multiple of it is an amount of the merchant's calls
 * (3.00, 4.00: config.ts `orderCall`), since several of them inside one call's window add up, and
 * the order's figures show only the sum (docs/fleet.md#order-leases, "Money moved outside the fleet").
 */
const BACK_OFFICE_AMOUNT = "1.30"

/** The clients' `notFoundProvesWithinMs` in a world: below how long its gateway keeps final orders. */
function notFoundBound(config: WorldConfig): number {
  const kept = orderMemoryMs(config)
  return Number.isFinite(kept) ? kept : 600_000
}

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

  /** Settles when the world is closed: what waits for a dead instance ends then ({@link close}). */
  private readonly burial: Promise<void>
  private bury!: () => void

  /** The `recover()` schedule's timer. */
  private schedule: ReturnType<typeof setInterval> | undefined

  private constructor(
    readonly config: WorldConfig,
    readonly store: ModelStore,
    readonly time: VirtualTime,
    /** Prefix of every key and client_orderid (unique per sequence: a database may be reused). */
    readonly run: string
  ) {
    this.sim = simulatorFor(config)
    for (let s = 0; s < SALE_KEYS; s++) this.salesByCoid.set(this.coid(s), this.saleKey(s))
    this.burial = new Promise<void>((resolve) => {
      this.bury = resolve
    })
    this.gateway = new Gateway(this.sim, this.book, POLICY.windowMs, (op, fields) => {
      if (op === "sale" || op === "preauth") return this.salesByCoid.get(fields.get("client_orderid") ?? "")
      return fields.get("comment") ?? undefined
    }, this.burial)
  }

  /** Opens a world on `store` (begun by the caller) with every instance started. */
  static async open(config: WorldConfig, store: ModelStore, time: VirtualTime, run: string): Promise<World> {
    const world = new World(config, store, time, run)
    for (let slot = 0; slot < config.instances.length; slot++) world.slots.push(await world.newInstance(slot))
    for (let s = 0; s < PRELUDE_ORDERS; s++) world.sale(0, s, false)
    await world.settle()
    if (world.running().length > 0 || world.book.problems.length > 0) throw new Error(`model: the opening orders did not go through: ${world.book.log.join("; ")}`)
    const memory = orderMemoryMs(config)
    world.book.note(`the opening orders are in; the gateway remembers an order ${memory === Number.POSITIVE_INFINITY ? "forever" : `${memory} ms after its last transaction`}`)
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
      // `order-not-found` proves "never sent" only while this world's gateway surely keeps orders (docs/fleet.md).
      reconcile: { settleMs: POLICY.windowMs, pollIntervalMs: POLICY.pollIntervalMs, notFoundProvesWithinMs: notFoundBound(this.config) },
      ...(store === undefined ? {} : { store, intentLeaseMs: this.leaseMs })
    }
  }

  private async newInstance(slot: number): Promise<Instance> {
    const id = `i${slot}.${this.generation++}`
    const style = this.config.instances[slot] ?? "promise"
    const base = await this.store.open(`${this.run}-${id}`)
    const link = new StoreLink(base, this.time, (key, outcome) => this.recoverWrite(id, key, outcome), this.burial)
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

  /** A network fault for the next send of `key` (and `status` down from it, for `downMs`). */
  private netFor(key: string, target: "sale" | "money", net: NetFault | undefined): void {
    if (net === undefined) return
    this.fault({ target, key, kind: net.kind, count: 1, ms: net.ms, downMs: net.downMs })
  }

  /** A sale or preauth with order-creating key `s` on instance `slot` (`net`: a fault for its key's next send). */
  sale(slot: number, s: number, long: boolean, net?: NetFault): void {
    const kind = kindOf(s)
    this.netFor(this.saleKey(s), "sale", net)
    const input = saleInput({ client_orderid: this.coid(s), amount: amountOf(kind) })
    this.use(this.saleKey(s), "sale", (again, l, n) => this.sale(again, s, l, n))
    this.start(slot, this.saleKey(s), `${kind} s${s}`, kind, input, long)
  }

  /** Order key `k` on the order of sale key `s` (skipped while the order does not exist; `net`: a fault for its key's next send). */
  orderCall(slot: number, s: number, k: number, long: boolean, net?: NetFault): void {
    const order = this.orderOf(s)
    if (order === undefined) {
      this.book.note(`order key s${s}-k${k}: no order yet, skipped`)
      return
    }
    const { method, amount } = orderCall(kindOf(s), k)
    const key = this.orderKey(s, k)
    this.netFor(key, "money", net)
    this.use(key, "money", (again, l, n) => this.orderCall(again, s, k, l, n))
    const input: Record<string, string> = { client_orderid: this.coid(s), orderid: order, comment: key }
    if (amount !== undefined) {
      input["amount"] = amount
      input["currency"] = "USD"
    }
    this.start(slot, key, `${method} ${amount ?? ""} s${s}-k${k}`, method, input, long)
  }

  /** The keys used so far, the most recently used first (what `again` picks from). */
  private readonly used: Array<{ readonly key: string; readonly repeat: (slot: number, long: boolean, net: NetFault | undefined) => void; readonly target: "sale" | "money" }> = []

  /**
   * A merchant's retry: the call of the `pick`-th key, again (with `net` on its first send). Keys
   * whose last answer was not a success come first, as a merchant retries what failed; among them
   * and among the others, the most recently used first.
   */
  again(slot: number, pick: number, long: boolean, net?: NetFault): void {
    if (this.used.length === 0) return
    const last = (key: string) => {
      for (let i = this.book.verdicts.length - 1; i >= 0; i--) if (this.book.verdicts[i]!.key === key) return this.book.verdicts[i]!.kind
      return undefined
    }
    const order = [...this.used.filter((u) => last(u.key) !== "applied"), ...this.used.filter((u) => last(u.key) === "applied")]
    const call = order[pick % order.length]!
    call.repeat(slot, long, net)
  }

  private use(key: string, target: "sale" | "money", repeat: (slot: number, long: boolean, net: NetFault | undefined) => void): void {
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
   * A capture (preauth) or return (sale) of `BACK_OFFICE_AMOUNT` made in the back office: a client
   * without a store, its own key each time, run in the background like every call. No sum of its
   * amounts is a merchant call's: a proof from the order's figures cannot tell two equal amounts
   * apart, and money moved outside the fleet's store is outside its order leases
   * (docs/fleet.md#order-leases). A written case may give another `amount` to show exactly that.
   */
  backOfficeCall(s: number, amount: string = BACK_OFFICE_AMOUNT): void {
    const order = this.sim.orderByClientOrderId(this.coid(s))
    if (order === undefined) return
    // The back office is the gateway's own: the merchant's network faults never reach it.
    this.backOffice ??= createPayClient(this.options(this.gateway.fetchFor("back-office", () => false, false), undefined))
    const key = `${this.run}-bo${this.backOfficeCount++}`
    const method = kindOf(s) === "preauth" ? "capture" : "return"
    this.book.note(`back office ${method} ${amount} on s${s} key=${key}`)
    void this.backOffice[method]({ client_orderid: this.coid(s), orderid: order.orderid, amount, currency: "USD", comment: key }, { idempotencyKey: key })
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
    const options = { ...POLICY.recover, notFoundProvesWithinMs: notFoundBound(this.config) }
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
    this.book.note(`fault: next ${rule.count} ${rule.key === undefined ? rule.target : `${rule.target} of ${rule.key}`} request(s) ${rule.kind}${rule.kind === "hold" && rule.ms !== undefined ? ` ${rule.ms}ms` : ""}${rule.downMs === undefined ? "" : `, then status down ${rule.downMs}ms`}`)
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
    return checkInvariants(this.book, this.calls.map((c) => ({ ...c, instance: c.instance.id })), Date.now())
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
    // Every fiber of this world ends before the next sequence: what waits on a dead instance fails,
    // and the clock runs past every deadline and lease its calls could still be waiting for.
    this.bury()
    await this.time.advance(POLICY.longDeadlineMs + Math.max(this.leaseMs, POLICY.longDeadlineMs) + POLICY.windowMs)
    // Kept for the next sequence with the same retention: every instance of this one is dead by now
    // (nothing it sends reaches the gateway), and reset forgets every order.
    this.sim.reset()
  }
}
