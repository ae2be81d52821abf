/**
 * The fleet's plan: every payment's flow, amount, card outcome and follow-up amount, every kill
 * (when, which worker, where), every database stall (when, which worker, how long) and every
 * back-office capture (which payment, how much), drawn from the seed before the run starts.
 * Concurrency changes only the timing, never what is asked.
 */
import { createRng } from "@paykit/stress/rng"

/** A payment's flow: a sale; a preauth then a partial capture; a sale then a partial return. */
export type Flow = "sale" | "preauth-capture" | "sale-return"

export interface PlannedPayment {
  readonly index: number
  readonly flow: Flow
  readonly clientOrderId: string
  /** Decimal string, USD. */
  readonly amount: string
  /** `approve` or `decline`: the worker maps it to a simulator test card (no card number is stored). */
  readonly card: "approve" | "decline"
  /** The partial capture or return (decimal string), for the follow-up flows. */
  readonly followAmount: string | undefined
}

/** Where a kill lands. */
export type KillPoint = "send" | "callback" | "anywhere"

export interface PlannedKill {
  /** The kill is armed once this many payments are finished. */
  readonly afterPayments: number
  /** Index of the worker to kill (modulo the live workers). */
  readonly worker: number
  readonly point: KillPoint
  /** Real ms the worker waits after the point is reached (send: bytes in flight; callback: before or after the effect). */
  readonly delayMs: number
}

// Amounts the simulator reads as outcomes (testkit magic amounts) are avoided: the card decides.
const MAGIC = new Set(["40.05", "40.51", "50.01"])

const cents = (n: bigint): string => `${n / 100n}.${String(n % 100n).padStart(2, "0")}`

export function planPayments(count: number, seed: number): PlannedPayment[] {
  const rng = createRng(seed)
  const out: PlannedPayment[] = []
  for (let index = 0; index < count; index++) {
    const roll = rng.int(100)
    const flow: Flow = roll < 50 ? "sale" : roll < 75 ? "preauth-capture" : "sale-return"
    let minor = BigInt(200 + rng.int(99_800))
    if (MAGIC.has(cents(minor))) minor += 1n
    // A partial follow-up (1 cent up to the amount minus 1 cent): a second one would also be accepted
    // by the gateway, so only the client's idempotency stands between a crash and moving it twice.
    const follow = flow === "sale" ? undefined : cents(1n + BigInt(rng.int(Number(minor - 1n))))
    out.push({ index, flow, clientOrderId: `fleet-${seed}-${index}`, amount: cents(minor), card: rng.chance(0.1) ? "decline" : "approve", followAmount: follow })
  }
  return out
}

/**
 * `kills` kills spread over the first four fifths of the run: a handler killed mid-callback holds
 * its callback's claim for the lease (20 s, real time), so a kill in the last fifth would keep the
 * flush waiting for it after the last payment; spread this way, those leases run out while the last
 * payments are still made.
 */
export function planKills(kills: number, payments: number, workers: number, seed: number): PlannedKill[] {
  const rng = createRng(seed ^ 0x9e3779b9)
  const span = Math.max(1, Math.floor(payments * 0.8))
  const out: PlannedKill[] = []
  for (let i = 0; i < kills; i++) {
    const slot = span / Math.max(1, kills)
    const roll = rng.int(100)
    out.push({
      afterPayments: Math.floor(i * slot + rng.next() * slot),
      worker: rng.int(Math.max(1, workers)),
      point: roll < 40 ? "send" : roll < 80 ? "callback" : "anywhere",
      delayMs: rng.int(25)
    })
  }
  return out.sort((a, b) => a.afterPayments - b.afterPayments)
}

/** A database stall: one worker's connections stop forwarding for `durationMs`. */
export interface PlannedStall {
  /** The stall begins once this many payments are finished. */
  readonly afterPayments: number
  /** Index of the worker slot whose connections stall. */
  readonly worker: number
  readonly durationMs: number
}

/** `stalls` stalls spread over the first nine tenths of the run, each within `[minMs, maxMs]`. */
export function planStalls(stalls: number, payments: number, workers: number, range: readonly [number, number], seed: number): PlannedStall[] {
  const rng = createRng(seed ^ 0x27d4eb2f)
  const span = Math.max(1, Math.floor(payments * 0.9))
  const slot = span / Math.max(1, stalls)
  const out: PlannedStall[] = []
  for (let i = 0; i < stalls; i++) {
    out.push({
      afterPayments: Math.floor(i * slot + rng.next() * slot),
      worker: rng.int(Math.max(1, workers)),
      durationMs: range[0] + rng.int(Math.max(1, range[1] - range[0] + 1))
    })
  }
  return out.sort((a, b) => a.afterPayments - b.afterPayments)
}

/** A capture made in the gateway's back office on a payment's preauth, beside the merchant's own capture. */
export interface PlannedBackOffice {
  readonly clientOrderId: string
  /** Decimal string: never the payment's follow-up amount, and at most what the preauth leaves beside it. */
  readonly amount: string
  /** Real ms after the preauth is approved (the merchant's capture comes about then too). */
  readonly delayMs: number
}

/**
 * The back-office captures: a `share` of the approved-card preauth-capture payments, each an amount
 * the preauth can hold beside the merchant's capture (so neither is refused for the other) and
 * different from it (so the audit tells them apart by amount, even when a reply was lost).
 */
export function planBackOffice(plan: ReadonlyArray<PlannedPayment>, share: number, seed: number): PlannedBackOffice[] {
  const rng = createRng(seed ^ 0x165667b1)
  const out: PlannedBackOffice[] = []
  for (const p of plan) {
    if (p.flow !== "preauth-capture" || p.card !== "approve" || p.followAmount === undefined) continue
    if (!rng.chance(share)) continue
    const left = minorOf(p.amount) - minorOf(p.followAmount)
    if (left < 1n) continue
    let minor = 1n + BigInt(rng.int(Number(left < 5_000n ? left : 5_000n)))
    if (minor === minorOf(p.followAmount)) minor = minor > 1n ? minor - 1n : minor + 1n
    if (minor > left || MAGIC.has(cents(minor))) continue
    out.push({ clientOrderId: p.clientOrderId, amount: cents(minor), delayMs: rng.int(400) })
  }
  return out
}

const minorOf = (amount: string): bigint => {
  const [whole, fraction = ""] = amount.split(".")
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, "0"))
}
