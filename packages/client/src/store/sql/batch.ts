/**
 * Many money calls' writes of one kind in one statement. A write that finds the statements of its
 * kind all out waits for one of them to return and goes with the others that waited meanwhile, so
 * a lone call is written at once and sixteen concurrent ones cost a few statements, not sixteen:
 * fewer round trips to a server, less per-statement work in PGlite.
 *
 * Each write still resolves only after the statement that carried it has committed, so "the intent
 * is recorded before the send" holds per call. A batch holds each key once, and a key's write waits
 * while a statement carrying an earlier write of that key is out (a second write of a key goes in a
 * later statement, after the first returned, as it would have run after the first: with two
 * statements out on a pool, the later one could otherwise commit first). A batch the database refused
 * with an error of its own (an SQLSTATE: the statement was rolled back, nothing of it was written)
 * is written again one write per statement, so one bad row fails only its own call; any other
 * failure (the connection) fails each write of the batch with it, as it would have failed each alone.
 *
 * @packageDocumentation
 */

/** How writes of one kind are written. */
export interface BatchOptions<I, O> {
  /** Statements of this kind out at once. */
  readonly inFlight: number
  /** Writes per statement at most. */
  readonly maxBatch: number
  /** A write's key: one per batch. */
  readonly keyOf: (item: I) => string
  /** One write in one statement. */
  readonly one: (item: I) => Promise<O>
  /** Two or more writes in one statement: their results in their order. */
  readonly many: (items: ReadonlyArray<I>) => Promise<ReadonlyArray<O>>
}

interface Waiting<I, O> {
  readonly item: I
  readonly resolve: (value: O) => void
  readonly reject: (error: unknown) => void
}

/** An SQLSTATE from the server: the statement failed there and was rolled back. */
const refusedByDatabase = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)
}

/** Writes through `options`, coalescing the writes that wait for a statement of their kind. */
export function batched<I, O>(options: BatchOptions<I, O>): (item: I) => Promise<O> {
  const queue: Array<Waiting<I, O>> = []
  let out = 0
  /** Keys in a statement out now: their next writes wait for it. */
  const outKeys = new Set<string>()

  const alone = async (w: Waiting<I, O>) => {
    try {
      w.resolve(await options.one(w.item))
    } catch (error) {
      w.reject(error)
    }
  }

  const write = async (batch: ReadonlyArray<Waiting<I, O>>): Promise<void> => {
    if (batch.length === 1) return alone(batch[0]!)
    let results: ReadonlyArray<O>
    try {
      results = await options.many(batch.map((w) => w.item))
      if (results.length !== batch.length) throw new Error(`a batch of ${batch.length} writes answered ${results.length}`)
    } catch (error) {
      if (refusedByDatabase(error)) await Promise.all(batch.map(alone))
      else for (const w of batch) w.reject(error)
      return
    }
    batch.forEach((w, i) => w.resolve(results[i]!))
  }

  const pump = () => {
    while (out < options.inFlight && queue.length > 0) {
      const keys = new Set<string>()
      const batch: Array<Waiting<I, O>> = []
      for (let i = 0; i < queue.length && batch.length < options.maxBatch;) {
        const key = options.keyOf(queue[i]!.item)
        if (keys.has(key) || outKeys.has(key)) {
          i++
          continue
        }
        keys.add(key)
        batch.push(queue.splice(i, 1)[0]!)
      }
      // Every write waiting is of a key out now: the statement carrying it pumps again on return.
      if (batch.length === 0) return
      out++
      for (const key of keys) outKeys.add(key)
      void write(batch).finally(() => {
        out--
        for (const key of keys) outKeys.delete(key)
        pump()
      })
    }
  }

  return (item) =>
    new Promise<O>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      pump()
    })
}
