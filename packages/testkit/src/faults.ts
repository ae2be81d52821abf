/**
 * Fault injection: latency, a 500 without processing, a connection reset before or after
 * processing, and a merchant callback endpoint that is "down".
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts"
import type { FaultKind, FaultRule } from "./views"
import { SimError } from "./replies"

interface LiveRule {
  readonly operation: string
  readonly kind: FaultKind
  readonly probability: number
  remaining: number
  readonly latencyMs: number
}

const KINDS: ReadonlySet<string> = new Set(["latency", "http-500", "reset-before", "reset-after", "callback-fail"])

/** The rule set; `take` decides (and counts) whether a rule fires. */
export class Faults {
  private rules: LiveRule[] = []

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
