/**
 * Fault injection: latency, a 500 without processing, a connection reset before or after
 * processing, and a merchant callback endpoint that is "down".
 *
 * @packageDocumentation
 */
import { declinableOperationIds, operations, type OperationId } from "@paykit/contracts"
import { SimError } from "../http/replies"

/** The kinds of fault the simulator can inject (see the README, "Faults"). */
export type FaultKind = "latency" | "http-500" | "reset-before" | "reset-after" | "callback-fail"

/** One fault rule: which operation, which fault and how often. */
export interface FaultRule {
  /** Operation id the rule applies to; `"*"` or absent means every operation. */
  operation?: OperationId | "*"
  /** The fault to inject. */
  kind: FaultKind
  /** Chance in 0..1 that a matching request is hit; default 1. */
  probability?: number
  /** The most times the rule fires; default unlimited. */
  count?: number
  /** Added delay for `latency`, in real milliseconds; default 100. */
  latencyMs?: number
}

interface LiveRule {
  readonly operation: string
  readonly kind: FaultKind
  readonly probability: number
  remaining: number
  readonly latencyMs: number
}

const KINDS: ReadonlySet<string> = new Set(["latency", "http-500", "reset-before", "reset-after", "callback-fail"])

/** A "decline the next payment" rule (`POST /__sim/decline-next`). */
interface DeclineNextRule {
  /** Only payments of this operation (e.g. `SALE`); absent: any payment operation. */
  readonly operation?: string
  /** Only this merchant's payments (its login); absent: any merchant. */
  readonly merchant?: string
  /** How many payments to decline; default 1. */
  readonly count?: number
}

/** The operations whose outcome `decline-next` can decide: the ones that charge or hold a card (spec `x-paykit-declinable`). */
const DECLINABLE_OPERATIONS: ReadonlySet<string> = new Set(declinableOperationIds)

/** The rule set; `take` decides (and counts) whether a rule fires. */
export class Faults {
  private rules: LiveRule[] = []
  private declines: Array<{ operation: string; merchant: string | undefined; remaining: number }> = []

  /** Adds a rule; throws on an unknown kind or an out-of-range probability. */
  add(rule: FaultRule): void {
    if (!KINDS.has(rule.kind)) throw new SimError("invalid-field", `kind: must be one of ${[...KINDS].join(", ")}`)
    const operation = rule.operation ?? "*"
    if (operation !== "*" && !Object.prototype.hasOwnProperty.call(operations, operation)) {
      throw new SimError("invalid-field", "operation: must be an operation id of the spec (e.g. SALE) or *")
    }
    const probability = rule.probability ?? 1
    if (!(probability >= 0 && probability <= 1)) throw new SimError("invalid-field", "probability: must be within 0..1")
    const count = rule.count ?? Number.POSITIVE_INFINITY
    if (!(count >= 0)) throw new SimError("invalid-field", "count: must be a non-negative number")
    this.rules.push({
      operation,
      kind: rule.kind,
      probability,
      remaining: count,
      latencyMs: rule.latencyMs ?? 100
    })
  }

  clear(): void {
    this.rules = []
    this.declines = []
  }

  /** Declines the next `count` payments matching the rule, whatever the card or amount says. */
  declineNext(rule: DeclineNextRule): void {
    const operation = rule.operation ?? "*"
    if (operation !== "*" && !DECLINABLE_OPERATIONS.has(operation)) {
      throw new SimError("invalid-field", `operation: must be one of ${[...DECLINABLE_OPERATIONS].join(", ")} (the payments decline-next can decide), or absent for any`)
    }
    if (rule.merchant !== undefined && (typeof rule.merchant !== "string" || rule.merchant === "")) throw new SimError("invalid-field", "merchant: must be a merchant's login")
    const count = rule.count ?? 1
    if (!Number.isInteger(count) || count < 1) throw new SimError("invalid-field", "count: must be a positive integer")
    this.declines.push({ operation, merchant: rule.merchant, remaining: count })
  }

  /** Whether the payment `operation` of merchant `login` must be declined now (uses up one). */
  takeDecline(operation: string, login: string): boolean {
    if (this.declines.length === 0) return false
    for (const rule of this.declines) {
      if (rule.remaining <= 0) continue
      if (rule.operation !== "*" && rule.operation !== operation) continue
      if (rule.merchant !== undefined && rule.merchant !== login) continue
      rule.remaining -= 1
      if (rule.remaining === 0) this.declines = this.declines.filter((r) => r.remaining > 0)
      return true
    }
    return false
  }

  /** How many declines are still queued (the dashboard shows it). */
  get pendingDeclines(): number {
    return this.declines.reduce((n, r) => n + r.remaining, 0)
  }

  /** Whether any rule exists at all (lets the hot path skip fault checks). */
  get empty(): boolean {
    return this.rules.length === 0
  }

  /** The first matching rule of `kind` that fires now (its count is used up by one), if any. */
  take(operation: string, kind: FaultKind): { latencyMs: number } | undefined {
    for (const rule of this.rules) {
      if (rule.kind !== kind || rule.remaining <= 0) continue
      if (rule.operation !== "*" && rule.operation !== operation) continue
      if (rule.probability < 1 && Math.random() >= rule.probability) continue
      rule.remaining -= 1
      return { latencyMs: rule.latencyMs }
    }
    return undefined
  }
}

/** Marker thrown inside the handler: the connection must be dropped instead of answered. */
export class ConnectionReset extends Error {
  constructor() {
    super("simulated connection reset")
  }
}

/** The rejection of an in-process fetch whose connection was "reset": the shape undici gives. */
export function fetchFailed(): TypeError {
  return new TypeError("fetch failed", {
    cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" })
  })
}
