/**
 * The OAuth nonce store of the simulator: like `InMemoryNonceStore` of `@paykit/signing` (a nonce
 * is forgotten once its timestamp has left the window), but its entries can be listed and loaded
 * again, so a restored simulator still refuses a nonce used before the snapshot.
 *
 * @packageDocumentation
 */
import type { NonceStore } from "@paykit/signing"

/** One remembered nonce; `expiresAt` in epoch seconds (wall clock, as OAuth timestamps are). */
interface NonceEntry {
  readonly consumerKey: string
  readonly nonce: string
  readonly expiresAt: number
}

const MAX_ENTRIES = 1_000_000

/** A process-local nonce store whose live entries can be exported and imported. */
export class SimNonceStore implements NonceStore {
  private readonly entries = new Map<string, NonceEntry>()
  private nextSweep = 0

  /** See `NonceStore.remember` of `@paykit/signing`. */
  remember(consumerKey: string, nonce: string, expiresAt: number, now: number): boolean {
    if (now >= this.nextSweep) {
      this.sweep(now)
      this.nextSweep = now + 1
    }
    // Length-prefixing keeps ("ab", "c") and ("a", "bc") apart.
    const key = `${consumerKey.length}:${consumerKey}${nonce}`
    const existing = this.entries.get(key)
    if (existing !== undefined && existing.expiresAt >= now) return false
    if (existing === undefined && this.entries.size >= MAX_ENTRIES) return false
    this.entries.set(key, { consumerKey, nonce, expiresAt })
    return true
  }

  /** Nonces still inside the window at `now` (epoch seconds). */
  live(now: number): NonceEntry[] {
    return [...this.entries.values()].filter((e) => e.expiresAt >= now)
  }

  /** Loads entries (restore); expired ones are skipped. */
  load(entries: ReadonlyArray<NonceEntry>, now: number): void {
    for (const e of entries) {
      if (e.expiresAt < now) continue
      this.entries.set(`${e.consumerKey.length}:${e.consumerKey}${e.nonce}`, { consumerKey: e.consumerKey, nonce: e.nonce, expiresAt: e.expiresAt })
    }
  }

  private sweep(now: number): void {
    for (const [key, e] of this.entries) if (e.expiresAt < now) this.entries.delete(key)
  }
}
