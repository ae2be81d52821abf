/**
 * A small seeded PRNG (mulberry32), shared by the chaos run and the fleet run: each draws every choice
 * it makes (flow mix, cards, kills, proxy behaviour) from one seed, so a failing run can be replayed.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number
  /** Uniform integer in [0, n). */
  int(n: number): number
  /** True with probability p. */
  chance(p: number): boolean
  /** One element of a non-empty list. */
  pick<T>(items: ReadonlyArray<T>): T
}

export function createRng(seed: number): Rng {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n) => Math.floor(next() * n),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list")
      return items[Math.floor(next() * items.length)]!
    }
  }
}
