/**
 * The clock's task queue (src/clock/task-queue.ts): lanes for streams of tasks that arrive in run order,
 * a heap for the rest. Whatever goes in, tasks must come out exactly by (time, queue order), as a
 * plain sort of everything queued gives them.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { TaskQueue, before, type Task } from "../src/clock/task-queue"
import { SimClock } from "../src/clock/clock"

type Op =
  | { readonly kind: "push"; readonly stream: number; readonly step: number }
  | { readonly kind: "pop" }
  | { readonly kind: "keep"; readonly modulo: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  // Streams 0-4 move forward by `step` (five in-order streams: one more than there are lanes);
  // stream 5 jumps anywhere (what the heap takes).
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("push" as const), stream: fc.integer({ min: 0, max: 5 }), step: fc.integer({ min: -3, max: 50 }) }) },
  { weight: 4, arbitrary: fc.constant({ kind: "pop" as const }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("keep" as const), modulo: fc.integer({ min: 2, max: 5 }) }) }
)

function runOrder(a: Task, b: Task): number {
  return before(a, b) ? -1 : before(b, a) ? 1 : 0
}

describe("task queue", () => {
  it("gives tasks out by (time, queue order), as a sort of the queued tasks does", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 0, max: 1000 }), (ops, jump) => {
        const queue = new TaskQueue()
        let model: Task[] = []
        const streams = [0, 100, 5_000, 86_400, 200, jump]
        let seq = 0
        for (const o of ops) {
          if (o.kind === "push") {
            // A stream's time mostly moves forward; a negative step sends a task before its last one.
            streams[o.stream]! += o.stream === 5 ? (o.step * 7919) % 1000 : o.step
            const task: Task = { at: streams[o.stream]!, seq: seq++, run: undefined, job: o.stream }
            queue.push(task)
            model.push(task)
          } else if (o.kind === "pop") {
            model.sort(runOrder)
            expect(queue.peek()).toBe(model[0])
            expect(queue.pop()).toBe(model.shift())
          } else {
            queue.keep((task) => task.seq % o.modulo !== 0)
            model = model.filter((task) => task.seq % o.modulo !== 0)
          }
          expect(queue.size).toBe(model.length)
        }
        model.sort(runOrder)
        expect(queue.sorted()).toEqual(model)
        const seen: Task[] = []
        queue.forEach((task) => seen.push(task))
        expect(seen.sort(runOrder)).toEqual(model)
        for (const task of model) expect(queue.pop()).toBe(task)
        expect(queue.pop()).toBeUndefined()
      }),
      { numRuns: 1000 }
    )
  })

  it("keeps order across lanes cut after long runs (more than 1024 taken from one lane)", () => {
    const queue = new TaskQueue()
    const model: Task[] = []
    let seq = 0
    for (let i = 0; i < 5000; i++) {
      const settle: Task = { at: 86_400_000 + i, seq: seq++, run: undefined, job: "settle" }
      const finalize: Task = { at: 20 + i, seq: seq++, run: undefined, job: "finalize" }
      queue.push(finalize)
      queue.push(settle)
      model.push(finalize, settle)
      if (i % 3 === 0) {
        model.sort(runOrder)
        expect(queue.pop()).toBe(model.shift())
      }
    }
    model.sort(runOrder)
    for (const task of model) expect(queue.pop()).toBe(task)
    expect(queue.size).toBe(0)
  })

  it("runs a clock's due tasks in time order, same-time tasks in the order queued", async () => {
    const clock = new SimClock("virtual", 0)
    const ran: string[] = []
    for (let i = 0; i < 20; i++) {
      clock.schedule(1_000 + i * 10, `finalize ${i}`, () => void ran.push(`finalize ${i}`))
      clock.schedule(86_400_000 + i * 10, `settle ${i}`, () => void ran.push(`settle ${i}`))
      if (i % 5 === 0) clock.schedule(1_005 + i * 10, `callback ${i}`, () => void ran.push(`callback ${i}`))
    }
    clock.schedule(1_000, "same time, queued last", () => void ran.push("same time, queued last"))
    await clock.advance(86_400_000 + 1_000)
    const expected = clock.pendingJobs()
    expect(expected).toEqual([])
    expect(ran.slice(0, 3)).toEqual(["finalize 0", "same time, queued last", "callback 0"])
    expect(ran.filter((r) => r.startsWith("settle"))).toEqual(Array.from({ length: 20 }, (_, i) => `settle ${i}`))
    expect(ran.indexOf("finalize 19")).toBeLessThan(ran.indexOf("settle 0"))
    expect(ran).toHaveLength(45)
  })
})
