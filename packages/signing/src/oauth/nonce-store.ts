/**
 * Where a verifier remembers nonces. Implement it over Redis or a database to share replay
 * protection between server instances; {@link InMemoryNonceStore} serves a single process.
 */
export interface NonceStore {
  /**
   * Records `nonce` for `consumerKey` until `expiresAt` (epoch seconds) and returns `true`, or
   * returns `false` when the pair is already recorded and has not expired. Must be atomic
   * (check-and-set), or two concurrent replays could both pass.
   */
  remember(consumerKey: string, nonce: string, expiresAt: number, now: number): boolean | Promise<boolean>
}

/** Options of {@link InMemoryNonceStore}. */
export interface InMemoryNonceStoreOptions {
  /**
   * Upper bound on remembered nonces; past it, new nonces are refused (reported as replays) rather
   * than letting memory grow without bound. Default 1,000,000.
   */
  readonly maxEntries?: number
}

/**
 * A process-local {@link NonceStore}. A nonce is forgotten once its request timestamp has left the
 * verifier's window, because from then on the timestamp check alone rejects a replay. Only
 * requests whose signature verified reach the store, so an attacker cannot fill it with junk.
 */
export class InMemoryNonceStore implements NonceStore {
  readonly #expiries = new Map<string, number>()
  readonly #maxEntries: number
  #nextSweep = 0

  constructor(options: InMemoryNonceStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 1_000_000
  }

  /** Number of nonces currently remembered. */
  get size(): number {
    return this.#expiries.size
  }

  /** See {@link NonceStore.remember}. */
  remember(consumerKey: string, nonce: string, expiresAt: number, now: number): boolean {
    // Sweeping at most once per second keeps the amortised cost per call constant.
    if (now >= this.#nextSweep) {
      for (const [key, expiry] of this.#expiries) if (expiry < now) this.#expiries.delete(key)
      this.#nextSweep = now + 1
    }
    // Length-prefixing keeps ("ab", "c") and ("a", "bc") apart.
    const key = `${consumerKey.length}:${consumerKey}${nonce}`
    const expiry = this.#expiries.get(key)
    if (expiry !== undefined && expiry >= now) return false
    if (expiry === undefined && this.#expiries.size >= this.#maxEntries) return false
    this.#expiries.set(key, expiresAt)
    return true
  }
}
