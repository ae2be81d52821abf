/**
 * Server callbacks: an HTTP GET to `server_callback_url` when a transaction reaches a final
 * status, signed with control = SHA-1(status + orderid + client_orderid + key), retried with
 * exponential backoff on the simulator clock until the merchant answers 200.
 *
 * @packageDocumentation
 */
import type { SimClock } from "../clock/clock"
import type { Faults } from "../rules/faults"
import { signCallback } from "../auth/auth"
import type { CallbackDelivery } from "./targets"

/** One delivery attempt of a server callback. The URL is shown without query or credentials. */
export interface CallbackAttempt {
  /** The order the callback is about. */
  orderid: string
  /** The merchant's order id. */
  client_orderid: string
  /** The status the callback reported. */
  status: string
  /** The merchant's callback URL. */
  url: string
  /** Attempt number, from 1. */
  attempt: number
  /** Epoch ms on the simulator clock. */
  at: number
  /** The HTTP status the merchant answered, or `"error"` when the request failed. */
  outcome: number | "error"
  /** The network error, when the request failed. */
  error?: string
  /**
   * Why the simulator refused to send this callback at all (its target is not allowed by
   * `callbackTargets`, e.g. a link-local metadata address); no request left the simulator and
   * the callback is not retried.
   */
  refused?: string
}

/** First retry delay; each next one doubles, up to {@link CALLBACK_MAX_DELAY_MS}. */
export const CALLBACK_FIRST_DELAY_MS = 10_000
/** Cap of the retry delay (12 h); 30 attempts then span about 9 days. */
export const CALLBACK_MAX_DELAY_MS = 12 * 60 * 60 * 1000
/** Attempts in all, as the real gateway makes. */
export const CALLBACK_MAX_ATTEMPTS = 30
/** Real-time limit of one delivery. */
const DELIVERY_TIMEOUT_MS = 5_000

/** The delay before attempt `n + 1` after attempt `n` failed. */
function retryDelay(attempt: number): number {
  return Math.min(CALLBACK_FIRST_DELAY_MS * 2 ** (attempt - 1), CALLBACK_MAX_DELAY_MS)
}

/** A callback to deliver: the URL and the ServerCallback fields without control. */
export interface CallbackJob {
  readonly url: string
  /** The merchant's login: a restored simulator finds the control key by it (snapshots never hold keys). */
  readonly login: string
  readonly controlKey: string
  /** The operation that created the order; `callback-fail` rules may name it. */
  readonly operation: string
  readonly fields: Readonly<Record<string, string>> & { status: string; orderid: string; client_orderid: string }
}

/** The pending-job record of a callback attempt (what the clock queue and snapshots hold). */
export interface CallbackJobRecord {
  readonly kind: "callback"
  /** The attempt number this job makes, from 1. */
  readonly attempt: number
  readonly callback: CallbackJob
}

/** Delivers callbacks and keeps the log of every attempt. */
export class CallbackSender {
  private log: CallbackAttempt[] = []
  /** The job of each log entry, same index (undefined for entries restored from a snapshot). */
  private jobs: Array<CallbackJob | undefined> = []
  private generation = 0
  /** Attempts whose HTTP request is under way (a snapshot re-queues them: at-least-once). */
  private readonly flying = new Set<{ readonly job: CallbackJob; readonly attempt: number; readonly generation: number }>()

  constructor(
    private readonly clock: SimClock,
    private readonly faults: Faults,
    private readonly delivery: CallbackDelivery
  ) {}

  attempts(): ReadonlyArray<CallbackAttempt> {
    return this.log
  }

  /** Attempts under way right now. */
  inFlight(): ReadonlyArray<{ readonly job: CallbackJob; readonly attempt: number }> {
    return [...this.flying].filter((f) => f.generation === this.generation)
  }

  /** Forgets the log; retries queued before are dropped by the clock's reset. */
  clear(): void {
    this.log = []
    this.jobs = []
    this.generation++
  }

  /** Stops for good (a closed simulator): attempts under way are neither logged nor retried. */
  stop(): void {
    this.generation++
  }

  /** Replaces the log (restore). */
  restoreLog(log: ReadonlyArray<CallbackAttempt>): void {
    this.log = log.map((a) => ({ ...a }))
    this.jobs = log.map(() => undefined)
  }

  /** Drops the logged attempts of orders the simulator forgot (retention). */
  forgetOrders(orderids: ReadonlySet<string>): void {
    if (this.log.some((a) => orderids.has(a.orderid))) this.log = this.log.filter((a) => !orderids.has(a.orderid))
  }

  /** Starts delivery now (attempt 1). Returns when that attempt is done. */
  send(job: CallbackJob): Promise<void> {
    return this.attempt(job, 1, this.generation)
  }

  /**
   * Sends the callback of log entry `index` again, byte for byte the same query (decision 11), as
   * one more attempt that is not retried if it fails. Undefined when the entry is unknown or was
   * restored from a snapshot (snapshots keep the log, not the callbacks' fields).
   */
  redeliver(index: number): Promise<CallbackAttempt> | undefined {
    const job = this.jobs[index]
    if (job === undefined) return undefined
    const rrn = job.fields["processor-rrn"]
    let last = 0
    this.log.forEach((a, i) => {
      const other = this.jobs[i]
      if (other === job || (other !== undefined && rrn !== undefined && other.fields["processor-rrn"] === rrn && other.fields.status === job.fields.status)) last = Math.max(last, a.attempt)
    })
    return this.attempt(job, last + 1, this.generation, false).then(() => this.log[this.log.length - 1]!)
  }

  /** The callback `type` (sale, reversal, chargeback, ...) of log entry `index`, when its fields are kept. */
  typeOf(index: number): string | undefined {
    return this.jobs[index]?.fields["type"]
  }

  /** The log entries whose callback can be sent again ({@link redeliver}). */
  redeliverable(index: number): boolean {
    return this.jobs[index] !== undefined
  }

  /** Queues attempt `n` of `job` at `at` on the simulator clock. */
  schedule(at: number, job: CallbackJob, n: number): void {
    const generation = this.generation
    const record: CallbackJobRecord = { kind: "callback", attempt: n, callback: job }
    this.clock.schedule(at, record, () => this.attempt(job, n, generation))
  }

  private async attempt(job: CallbackJob, n: number, generation: number, retry = true): Promise<void> {
    if (generation !== this.generation) return
    const record: CallbackAttempt = {
      orderid: job.fields.orderid,
      client_orderid: job.fields.client_orderid,
      status: job.fields.status,
      url: redactUrl(job.url),
      attempt: n,
      at: this.clock.now(),
      outcome: "error"
    }
    const flight = { job, attempt: n, generation }
    this.flying.add(flight)
    try {
      if (this.faults.take(job.operation, "callback-fail") !== undefined) {
        record.error = "simulated: merchant callback endpoint down"
      } else {
        try {
          const control = signCallback(job.fields, job.controlKey)
          const query = new URLSearchParams({ ...job.fields, control }).toString()
          const target = job.url + (job.url.includes("?") ? "&" : "?") + query
          const signal = AbortSignal.timeout(DELIVERY_TIMEOUT_MS)
          const { policy, resolve, transport } = this.delivery
          if (policy === undefined) {
            record.outcome = await transport({ url: target, hostname: "", address: "", family: 4, signal })
          } else {
            // Checked at every attempt: a name may resolve elsewhere by the next one.
            const verdict = await policy.check(target, resolve)
            if (verdict.ok) record.outcome = await transport({ url: target, hostname: verdict.hostname, address: verdict.address, family: verdict.family, signal })
            else {
              record.refused = verdict.reason.slice(0, 300)
              record.error = "refused by callbackTargets: nothing was sent"
            }
          }
        } catch (error) {
          record.error = describe(error)
        }
      }
    } finally {
      this.flying.delete(flight)
    }
    if (generation !== this.generation) return
    this.log.push(record)
    this.jobs.push(job)
    // A refused target stays refused (the policy is configuration): no retry.
    if (retry && record.outcome !== 200 && record.refused === undefined && n < CALLBACK_MAX_ATTEMPTS) this.schedule(this.clock.now() + retryDelay(n), job, n + 1)
  }
}

/** The URL without credentials, query or fragment: what may be logged. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return "(invalid url)"
  }
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: { code?: unknown } }).cause
    const code = cause !== undefined && typeof cause.code === "string" ? ` (${cause.code})` : ""
    return `${error.name}: ${error.message}${code}`.slice(0, 200)
  }
  return "delivery failed"
}
