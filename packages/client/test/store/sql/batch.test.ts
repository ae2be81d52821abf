/**
 * The coalescing of concurrent writes of one kind (src/store/sql/batch.ts): a lone write goes at once;
 * writes that wait go together, each answered with its own result only once its statement
 * returned; a key is in a batch once; a batch the database refused is written again one by one; any
 * other failure fails each write of the batch.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { batched } from "../../../src/store/sql/batch"

interface Item {
  readonly key: string
  readonly n: number
}

/** A statement log and writes whose statements return when the test says so. */
function harness(inFlight = 1, maxBatch = 8) {
  const statements: Array<{ items: ReadonlyArray<Item>; finish: (error?: unknown) => void }> = []
  let out = 0
  let maxOut = 0
  const statement = <O>(items: ReadonlyArray<Item>, answer: () => O) =>
    new Promise<O>((resolve, reject) => {
      out++
      maxOut = Math.max(maxOut, out)
      statements.push({
        items,
        finish: (error) => {
          out--
          if (error === undefined) resolve(answer())
          else reject(error)
        }
      })
    })
  const write = batched<Item, string>({
    inFlight,
    maxBatch,
    keyOf: (i) => i.key,
    one: (i) => statement([i], () => `one:${i.key}:${i.n}`),
    many: (is) => statement(is, () => is.map((i) => `many:${i.key}:${i.n}`))
  })
  return { write, statements, maxOut: () => maxOut }
}

const tick = () => new Promise((r) => setTimeout(r, 0))
const settled = <T>(p: Promise<T>) => {
  const state: { value?: T; error?: unknown; done: boolean } = { done: false }
  p.then((value) => Object.assign(state, { value, done: true }), (error: unknown) => Object.assign(state, { error, done: true }))
  return state
}

describe("batched writes", () => {
  it("a lone write goes at once in a statement of its own", async () => {
    const h = harness()
    const a = h.write({ key: "a", n: 1 })
    expect(h.statements.map((s) => s.items.length)).toEqual([1])
    h.statements[0]!.finish()
    expect(await a).toBe("one:a:1")
  })

  it("writes that wait go together once the statement out returned, each answered only after its own statement", async () => {
    const h = harness()
    const a = settled(h.write({ key: "a", n: 1 }))
    const b = settled(h.write({ key: "b", n: 2 }))
    const c = settled(h.write({ key: "c", n: 3 }))
    await tick()
    expect(h.statements.map((s) => s.items.map((i) => i.key))).toEqual([["a"]])
    h.statements[0]!.finish()
    await tick()
    expect(a).toMatchObject({ done: true, value: "one:a:1" })
    expect(b.done).toBe(false)
    expect(h.statements[1]!.items.map((i) => i.key)).toEqual(["b", "c"])
    h.statements[1]!.finish()
    await tick()
    expect(b).toMatchObject({ done: true, value: "many:b:2" })
    expect(c).toMatchObject({ done: true, value: "many:c:3" })
  })

  it("a key is in a batch once: its second write goes in the next statement, after the first", async () => {
    const h = harness()
    void h.write({ key: "x", n: 0 })
    const first = settled(h.write({ key: "k", n: 1 }))
    const second = settled(h.write({ key: "k", n: 2 }))
    const other = settled(h.write({ key: "o", n: 3 }))
    h.statements[0]!.finish()
    await tick()
    expect(h.statements[1]!.items.map((i) => `${i.key}${i.n}`)).toEqual(["k1", "o3"])
    h.statements[1]!.finish()
    await tick()
    expect(second.done).toBe(false)
    expect(h.statements[2]!.items.map((i) => `${i.key}${i.n}`)).toEqual(["k2"])
    h.statements[2]!.finish()
    await tick()
    expect([first.value, second.value, other.value]).toEqual(["many:k:1", "one:k:2", "many:o:3"])
  })

  it("with two statements out, a key's second write waits for the statement carrying its first, however the others return", async () => {
    // Statements return in any order on a pool: `k`'s second write must not be in a statement out
    // beside the one carrying its first, or the later write could commit first.
    const h = harness(2)
    const first = settled(h.write({ key: "k", n: 1 }))
    void h.write({ key: "x", n: 0 })
    const other = settled(h.write({ key: "o", n: 2 }))
    const second = settled(h.write({ key: "k", n: 3 }))
    expect(h.statements.map((s) => s.items.map((i) => `${i.key}${i.n}`))).toEqual([["k1"], ["x0"]])
    // The statement of `x` returns first: `o` goes, `k`'s second stays back while `k1` is out.
    h.statements[1]!.finish()
    await tick()
    expect(h.statements.slice(2).map((s) => s.items.map((i) => `${i.key}${i.n}`))).toEqual([["o2"]])
    h.statements[2]!.finish()
    await tick()
    expect(other).toMatchObject({ done: true, value: "one:o:2" })
    expect(h.statements).toHaveLength(3)
    expect(second.done).toBe(false)
    h.statements[0]!.finish()
    await tick()
    expect(first).toMatchObject({ done: true, value: "one:k:1" })
    expect(h.statements.slice(3).map((s) => s.items.map((i) => `${i.key}${i.n}`))).toEqual([["k3"]])
    h.statements[3]!.finish()
    await tick()
    expect(second).toMatchObject({ done: true, value: "one:k:3" })
  })

  it("a batch the database refused (an SQLSTATE) is written again one by one: only the bad write fails", async () => {
    const refused = Object.assign(new Error("new row violates check constraint"), { code: "23514" })
    const h = harness()
    void h.write({ key: "x", n: 0 })
    const good = settled(h.write({ key: "g", n: 1 }))
    const bad = settled(h.write({ key: "b", n: 2 }))
    h.statements[0]!.finish()
    await tick()
    h.statements[1]!.finish(refused)
    await tick()
    expect(h.statements.slice(2).map((s) => s.items.map((i) => i.key))).toEqual([["g"], ["b"]])
    h.statements[2]!.finish()
    h.statements[3]!.finish(refused)
    await tick()
    expect(good).toMatchObject({ done: true, value: "one:g:1" })
    expect(bad).toMatchObject({ done: true, error: refused })
  })

  it("a batch lost with its connection (no SQLSTATE) fails each of its writes, none written again", async () => {
    const lost = new Error("Connection terminated unexpectedly")
    const h = harness()
    void h.write({ key: "x", n: 0 })
    const p = settled(h.write({ key: "p", n: 1 }))
    const q = settled(h.write({ key: "q", n: 2 }))
    h.statements[0]!.finish()
    await tick()
    h.statements[1]!.finish(lost)
    await tick()
    expect(h.statements).toHaveLength(2)
    expect(p).toMatchObject({ done: true, error: lost })
    expect(q).toMatchObject({ done: true, error: lost })
  })

  it("statements returning in any order: a key's writes each go out only after the statement carrying the one before returned", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "b", "c", "d"), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.infiniteStream(fc.nat()),
        async (keys, inFlight, maxBatch, picks) => {
          const h = harness(inFlight, maxBatch)
          /** The order of events: a statement out (its index), or returned. */
          const events: Array<{ kind: "out" | "returned"; at: number }> = []
          let seen = 0
          const noteOut = () => {
            for (; seen < h.statements.length; seen++) events.push({ kind: "out", at: seen })
          }
          const answers = keys.map((key, n) => settled(h.write({ key, n })))
          noteOut()
          const open = new Set<number>()
          const pick = picks[Symbol.iterator]()
          for (;;) {
            for (let i = 0; i < h.statements.length; i++) if (!events.some((e) => e.kind === "returned" && e.at === i)) open.add(i)
            if (open.size === 0) break
            // Any statement out returns next, as on a pool.
            const choice = [...open][pick.next().value! % open.size]!
            open.clear()
            h.statements[choice]!.finish()
            events.push({ kind: "returned", at: choice })
            await tick()
            noteOut()
          }
          answers.forEach((a, n) => expect(a).toMatchObject({ done: true, value: expect.stringMatching(new RegExp(`^(one|many):${keys[n]}:${n}$`)) }))
          const statementOf = new Map(h.statements.flatMap((st, at) => st.items.map((i) => [i.n, at] as const)))
          const position = (kind: "out" | "returned", at: number) => events.findIndex((e) => e.kind === kind && e.at === at)
          for (const key of new Set(keys)) {
            const at = keys.flatMap((k, n) => (k === key ? [statementOf.get(n)!] : []))
            for (let i = 1; i < at.length; i++) expect(position("out", at[i]!)).toBeGreaterThan(position("returned", at[i - 1]!))
          }
          expect(h.maxOut()).toBeLessThanOrEqual(inFlight)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("any arrival: each write answered once with its own result, batches within bounds, keys once per batch", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ key: fc.constantFrom("a", "b", "c", "d", "e", "f"), wait: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 5 }),
        async (arrivals, inFlight, maxBatch) => {
          const h = harness(inFlight, maxBatch)
          let finished = 0
          const drain = async () => {
            while (finished < h.statements.length) {
              h.statements[finished++]!.finish()
              await tick()
            }
          }
          const answers: Array<ReturnType<typeof settled<string>>> = []
          for (const [n, a] of arrivals.entries()) {
            answers.push(settled(h.write({ key: a.key, n })))
            if (a.wait) await drain()
          }
          await drain()
          answers.forEach((s, n) => {
            expect(s.done).toBe(true)
            expect(s.value).toMatch(new RegExp(`^(one|many):${arrivals[n]!.key}:${n}$`))
          })
          expect(h.statements.flatMap((s) => s.items.map((i) => i.n)).sort((x, y) => x - y)).toEqual(arrivals.map((_, n) => n))
          // A key's writes in the order they came, each in a later statement than the one before.
          const statementOf = new Map(h.statements.flatMap((s, at) => s.items.map((i) => [i.n, at] as const)))
          for (const key of new Set(arrivals.map((a) => a.key))) {
            const at = arrivals.flatMap((a, n) => (a.key === key ? [statementOf.get(n)!] : []))
            expect(at).toEqual([...at].sort((x, y) => x - y))
            expect(new Set(at).size).toBe(at.length)
          }
          for (const s of h.statements) {
            expect(s.items.length).toBeLessThanOrEqual(maxBatch)
            expect(new Set(s.items.map((i) => i.key)).size).toBe(s.items.length)
          }
          expect(h.maxOut()).toBeLessThanOrEqual(inFlight)
        }
      ),
      { numRuns: 200 }
    )
  })
})
