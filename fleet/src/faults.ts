/**
 * The faults a fleet run injects besides its kills and its callback proxy, and their presets:
 *
 * - **database stalls**: one worker's database connections stop forwarding for a while (no reset, no
 *   answer), through a TCP proxy between that worker and PostgreSQL (`db-proxy.ts`);
 * - **retention**: the simulator forgets final orders beyond `maxOrders`, or `retentionMs` of real
 *   time after their last transaction (`order-not-found` after);
 * - **back-office captures**: a partial capture made straight on the simulator, beside the merchant's
 *   own capture of the same preauth, as a person in the gateway's back office would;
 * - **late sends**: the gateway holds a money-moving request for `lateSendMs` before it processes it
 *   (the client's attempt has timed out by then; the request still lands);
 * - **lost replies**: the gateway processes a money-moving request and drops the connection;
 * - **key replays**: a restarted worker sends again calls with idempotency keys its dead
 *   predecessors used (their last ones first), from a client with an empty memory.
 *
 * `default` is what `pnpm fleet` (and `pnpm test`) runs; `all` turns every fault on; `none` is the
 * run without them. Each fault has its own flag that overrides the preset (scripts/fleet.ts).
 */

/** A money-moving operation a late send or a lost reply can hit. */
export type MoneyOperation = "SALE" | "PREAUTH" | "CAPTURE" | "RETURN"

export const MONEY_OPERATIONS: ReadonlyArray<MoneyOperation> = ["SALE", "PREAUTH", "CAPTURE", "RETURN"]

export interface FleetFaults {
  /** Database stalls over the run (each one worker's connections, for a time drawn from `dbStallMs`). */
  readonly dbStalls: number
  /** Shortest and longest stall (real ms). */
  readonly dbStallMs: readonly [number, number]
  /** The simulator's `retention.maxOrders`, or `undefined`: it forgets nothing by count. */
  readonly retention: number | undefined
  /**
   * How long (real ms) the simulator keeps a final order after its last transaction, at least, or
   * `undefined`: it forgets nothing by age. Its own clock runs faster than real time while the run
   * moves it along, so it is told this times `SIM_CLOCK_MAX_RATE` (settings.ts) on that clock.
   */
  readonly retentionMs: number | undefined
  /** Share (0..1) of the preauth-capture payments that also get a back-office capture. */
  readonly backOffice: number
  /** Share (0..1) of the money-moving requests of `lateSendOps` the gateway holds for `lateSendMs`. */
  readonly lateSends: number
  readonly lateSendOps: ReadonlyArray<MoneyOperation>
  /** Real ms a late send is held (above the client's per-attempt timeout, so the attempt times out). */
  readonly lateSendMs: number
  /** Share (0..1) of the money-moving requests of `lostReplyOps` processed and then answered by a dropped connection. */
  readonly lostReplies: number
  readonly lostReplyOps: ReadonlyArray<MoneyOperation>
  /** Keys each restarted worker replays. */
  readonly replays: number
}

export const NO_FAULTS: FleetFaults = {
  dbStalls: 0,
  dbStallMs: [1_000, 3_000],
  retention: undefined,
  retentionMs: undefined,
  backOffice: 0,
  lateSends: 0,
  lateSendOps: MONEY_OPERATIONS,
  lateSendMs: 3_500,
  lostReplies: 0,
  lostReplyOps: MONEY_OPERATIONS,
  replays: 0
}

/**
 * Every fault on, at rates that make each of them happen in a 300-payment run, the simulator
 * forgetting final orders 30 s after their last transaction.
 */
export const ALL_FAULTS: FleetFaults = {
  dbStalls: 8,
  dbStallMs: [1_000, 9_000],
  retention: undefined,
  retentionMs: 30_000,
  backOffice: 0.3,
  lateSends: 0.05,
  lateSendOps: MONEY_OPERATIONS,
  // Past the call's deadline (5 s): the call ends unknown while its request is still held.
  lateSendMs: 6_000,
  lostReplies: 0.03,
  lostReplyOps: MONEY_OPERATIONS,
  replays: 6
}

/**
 * What `pnpm fleet` (and so `pnpm test`) runs: every fault, at rates that keep the run short. A
 * gateway that forgets orders may leave an outcome only a person can settle (`unknown left`, not a
 * failure: docs/fleet.md#a-gateway-that-forgets-orders).
 */
export const DEFAULT_FAULTS: FleetFaults = {
  dbStalls: 4,
  dbStallMs: [500, 2_500],
  retention: undefined,
  retentionMs: 30_000,
  backOffice: 0.3,
  lateSends: 0.03,
  lateSendOps: MONEY_OPERATIONS,
  lateSendMs: 3_500,
  lostReplies: 0.03,
  lostReplyOps: MONEY_OPERATIONS,
  replays: 3
}

/**
 * The workers' `notFoundProvesWithinMs` (docs/fleet.md#the-intent-protocol): below how long the
 * simulator surely keeps a final order. Forgetting by count may forget one at once (0: never a
 * proof); by age, four fifths of the real time it keeps one at least (its clock's speed is allowed
 * for, settings.ts `SIM_CLOCK_MAX_RATE`); `undefined` (the client's default) when it forgets nothing.
 */
export function notFoundBound(f: FleetFaults): number | undefined {
  if (f.retention !== undefined) return 0
  return f.retentionMs === undefined ? undefined : Math.floor(f.retentionMs * 0.8)
}

/**
 * The workers' processing window (`settleMs`, in the client's `reconcile` and in `recover()`): how
 * long after a call's last send may have ended the gateway may still process it (packages/client
 * config.ts `ReconcilePolicy.settleMs`). A send may start just before the call's deadline (when its
 * sends end, `sendsEndBy`), so a held request lands up to the whole hold after it: with late sends,
 * the hold plus a second of margin for a loaded machine's timers, else the client's attempt timeout.
 * An unchanged order proves a capture or return did not land only once no held request can land.
 */
export function settleFor(f: FleetFaults, timeoutMs: number): number {
  return f.lateSends > 0 ? Math.max(timeoutMs, f.lateSendMs + 1_000) : timeoutMs
}

export const PRESETS: Readonly<Record<string, FleetFaults>> = { default: DEFAULT_FAULTS, none: NO_FAULTS, all: ALL_FAULTS }

/** One line naming every fault as it is set (what the run prints first). */
export function describeFaults(f: FleetFaults): string {
  const ops = (list: ReadonlyArray<MoneyOperation>) => list.map((o) => o.toLowerCase()).join("+")
  return [
    `db stalls ${f.dbStalls}${f.dbStalls > 0 ? ` (${f.dbStallMs[0]}-${f.dbStallMs[1]} ms)` : ""}`,
    `retention ${f.retention === undefined && f.retentionMs === undefined ? "off" : [f.retention === undefined ? "" : `${f.retention} orders`, f.retentionMs === undefined ? "" : `${f.retentionMs} ms`].filter((x) => x !== "").join(", ")}`,
    `back-office captures ${f.backOffice}`,
    `late sends ${f.lateSends}${f.lateSends > 0 ? ` (${ops(f.lateSendOps)}, ${f.lateSendMs} ms)` : ""}`,
    `lost replies ${f.lostReplies}${f.lostReplies > 0 ? ` (${ops(f.lostReplyOps)})` : ""}`,
    `key replays ${f.replays} per restart`
  ].join(", ")
}

/** The simulator's fault rules for the late sends and the lost replies. */
export function simulatorRules(f: FleetFaults): Array<Record<string, unknown>> {
  const rules: Array<Record<string, unknown>> = []
  if (f.lateSends > 0) for (const operation of f.lateSendOps) rules.push({ operation, kind: "latency", probability: f.lateSends, latencyMs: f.lateSendMs })
  if (f.lostReplies > 0) for (const operation of f.lostReplyOps) rules.push({ operation, kind: "reset-after", probability: f.lostReplies })
  return rules
}

/** A list of operations from `sale,capture` (case-insensitive); the unknown name, or the list. */
export function parseOperations(text: string): ReadonlyArray<MoneyOperation> | string {
  const out: MoneyOperation[] = []
  for (const part of text.split(",").map((p) => p.trim().toUpperCase()).filter((p) => p !== "")) {
    if (!(MONEY_OPERATIONS as ReadonlyArray<string>).includes(part)) return part
    if (!out.includes(part as MoneyOperation)) out.push(part as MoneyOperation)
  }
  return out
}
