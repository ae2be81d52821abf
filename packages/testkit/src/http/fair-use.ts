/**
 * Fair use: one token bucket per merchant, on the simulator clock, so one merchant's flood cannot
 * starve the others on a shared sandbox. Off unless configured. A request finding the bucket empty
 * is answered 429 with the gateway's ServerErrorResponse shape, `error-code: rate-limited`, and a
 * `Retry-After` (seconds); it changes nothing.
 *
 * @packageDocumentation
 */
import { SimError } from "./replies"

/** A per-merchant token bucket: `requestsPerSecond` refill, up to `burst` requests at once. */
export interface RateLimit {
  /** Sustained requests per second per merchant (refill rate); > 0. */
  readonly requestsPerSecond: number
  /** Bucket size (requests allowed at once after a quiet spell); default `requestsPerSecond`, at least 1. */
  readonly burst?: number
}

/** A rate-limit setting that breaks its rules. */
export class RateLimitError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override readonly name = "RateLimitError"
}

interface Bucket {
  tokens: number
  at: number
}

/** The buckets of every merchant; `take` charges one request. */
export class FairUse {
  private readonly buckets = new Map<string, Bucket>()
  private readonly rate: number
  private readonly burst: number
  private readonly perSecond: number

  /** @throws RateLimitError when `requestsPerSecond` is not a positive number or `burst` is below 1. */
  constructor(limit: RateLimit, private readonly now: () => number) {
    if (!(typeof limit.requestsPerSecond === "number" && Number.isFinite(limit.requestsPerSecond) && limit.requestsPerSecond > 0)) {
      throw new RateLimitError(`rateLimit.requestsPerSecond: must be a positive number, got ${String(limit.requestsPerSecond)}`)
    }
    const burst = limit.burst ?? Math.max(1, limit.requestsPerSecond)
    if (!(typeof burst === "number" && Number.isFinite(burst) && burst >= 1)) throw new RateLimitError(`rateLimit.burst: must be a number ≥ 1, got ${String(limit.burst)}`)
    this.perSecond = limit.requestsPerSecond
    this.rate = limit.requestsPerSecond / 1000
    this.burst = burst
  }

  /**
   * Charges one request to `merchant`'s bucket.
   *
   * @throws SimError `rate-limited` (HTTP 429) when the bucket is empty; `retryAfterS` says when one token is back.
   */
  take(merchant: string, clientOrderId?: string): void {
    const now = this.now()
    let bucket = this.buckets.get(merchant)
    if (bucket === undefined) {
      bucket = { tokens: this.burst, at: now }
      this.buckets.set(merchant, bucket)
    } else if (now > bucket.at) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.rate)
      bucket.at = now
    }
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return
    }
    const retryAfterS = Math.max(1, Math.ceil((1 - bucket.tokens) / this.rate / 1000))
    const error = new SimError("rate-limited", `login: merchant ${merchant.slice(0, 64)} is over its fair-use limit (${this.perSecond} requests/s, burst ${this.burst}); retry after ${retryAfterS} s`, clientOrderId)
    error.retryAfterS = retryAfterS
    throw error
  }

  /** Forgets every bucket (a reset). */
  clear(): void {
    this.buckets.clear()
  }
}
