/**
 * The fault matrix: every money-moving operation × every fault the simulator offers
 * (500, reset before/after processing, latency past the timeout) or an injected fetch wrapper adds
 * (undecodable 200 and 408 after processing, 429 before it, an abort after the bytes left) × every
 * merchant reaction (nothing, the same call again, the same call with the same key, awaitFinal).
 * Judged from the simulator's own order view: no money moved twice, and no answer the merchant got
 * claims an outcome the simulator contradicts.
 */
import { createSimulator, type Simulator } from "@paykit/testkit"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { createPayClient, type PromisePayClient } from "../../src/index"
import { callOp, countMoved, matrixOps, pathOf, type MatrixOp, type Prepared } from "../support/matrix-ops"
import { BASE_URL, clientOptions } from "../support/sim"
import { startTestTime, testTimeoutSignal, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const FAULTS = ["http-500", "reset-before", "reset-after", "latency", "undecodable-200", "408-after", "429-before", "interrupt"] as const
const REACTIONS = ["nothing", "again", "same-key", "awaitFinal"] as const
type Fault = (typeof FAULTS)[number]
type Reaction = (typeof REACTIONS)[number]

const LATENCY_MS = 120
type Settled = { ok: true; value: Record<string, unknown> } | { ok: false; error: Record<string, unknown> & { _tag: string } }
const settle = (p: Promise<unknown>): Promise<Settled> =>
  p.then((value) => ({ ok: true as const, value: value as Record<string, unknown> }), (error) => ({ ok: false as const, error }))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface Answer {
  readonly label: string
  readonly r: Settled
  readonly countAtAnswer: number
}

interface CaseResult {
  readonly name: string
  readonly answers: ReadonlyArray<Answer>
  readonly finalCount: number
  readonly finalOrders: number
  readonly problems: ReadonlyArray<string>
}

const BARE = new Set(["Timeout", "TransportError", "GatewayServerError", "DecodeError"])

function faultyClient(sim: Simulator, op: MatrixOp, fault: Fault) {
  let armed = false
  const prefix = pathOf(op.id)
  const fetch = async (req: Request): Promise<Response> => {
    if (!armed || !new URL(req.url).pathname.startsWith(prefix)) return sim.fetch(req)
    armed = false
    if (fault === "429-before") return new Response("", { status: 429 })
    const processed = await sim.fetch(req)
    if (fault === "undecodable-200") return new Response("<html>gateway hiccup</html>", { status: 200 })
    if (fault === "408-after") return new Response("", { status: 408 })
    return processed
  }
  const pay = createPayClient(clientOptions(sim, {
    fetch,
    timeoutMs: 50,
    deadlineMs: 3000,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 4 },
    reconcile: { settleMs: 250, pollIntervalMs: 10 }
  }))
  return { pay, arm: () => (armed = true) }
}

function arm(sim: Simulator, op: MatrixOp, fault: Fault, wrapper: () => void): AbortSignal | undefined {
  switch (fault) {
    case "http-500":
    case "reset-before":
    case "reset-after":
      sim.faults.add({ operation: op.id, kind: fault, count: 1 })
      return undefined
    case "latency":
      sim.faults.add({ operation: op.id, kind: "latency", count: 1, latencyMs: LATENCY_MS })
      return undefined
    case "interrupt":
      // The request is held by the gateway; the merchant's signal fires while it is in flight.
      sim.faults.add({ operation: op.id, kind: "latency", count: 1, latencyMs: LATENCY_MS })
      return testTimeoutSignal(20)
    default:
      wrapper()
      return undefined
  }
}

/** Checks one answer against the simulator's order view at the moment it was given. */
function judgeAnswer(a: Answer, problems: Array<string>): void {
  if (a.r.ok) {
    if (a.countAtAnswer !== 1) problems.push(`${a.label}: success while the order shows ${a.countAtAnswer} transactions`)
    return
  }
  const e = a.r.error
  if (BARE.has(e._tag)) problems.push(`${a.label}: bare ${e._tag} after an unknown outcome`)
  if (e._tag === "ReconcileConflict") problems.push(`${a.label}: conflict ${String(e["field"])}`)
  if (e._tag === "OutcomeUnknown" && e["mayHaveApplied"] === false && a.countAtAnswer !== 0) problems.push(`${a.label}: said not applied, order shows ${a.countAtAnswer}`)
  if (e._tag === "Cancelled" && a.countAtAnswer !== 0) problems.push(`${a.label}: cancelled but applied`)
  if (typeof e["idempotencyKey"] !== "string") problems.push(`${a.label}: ${e._tag} without idempotencyKey`)
}

function judgeAwaitFinal(sim: Simulator, op: MatrixOp, p: Prepared, r: Settled, count: number, problems: Array<string>): void {
  const order = p.orderid !== undefined ? sim.order(p.orderid) : sim.orders().find((o) => o.client_orderid === p.client_orderid)
  if (!r.ok) {
    if (r.error._tag === "GatewayValidationError" && r.error["errorCode"] === "order-not-found") {
      if (order !== undefined) problems.push("awaitFinal: order-not-found, yet the order exists")
    } else problems.push(`awaitFinal: ${r.error._tag}`)
    return
  }
  const f = r.value
  if (order === undefined) return void problems.push("awaitFinal: final status of an order the simulator does not have")
  if (p.orderid === undefined && f["status"] !== order.status) problems.push(`awaitFinal: ${String(f["status"])} but the order is ${order.status}`)
  if (op.txType === "capture" && f["captured-amount"] !== order.captured) problems.push(`awaitFinal: captured ${String(f["captured-amount"])} vs ${order.captured}`)
  if (op.txType === "return" && (f["outcome"] === "partially-refunded" || f["outcome"] === "refunded") !== (count > 0)) problems.push(`awaitFinal: outcome ${String(f["outcome"])} with ${count} returns`)
  if (op.txType === "void" && (f["outcome"] === "voided") !== (count > 0)) problems.push(`awaitFinal: outcome ${String(f["outcome"])} with ${count} voids`)
}

/** Where an operation on an existing order puts its money in the simulator's ledger, and how much. */
const LEDGER: Partial<Record<MatrixOp["method"], (p: Prepared) => { bucket: "captured" | "returned" | "voided" | "paidOut"; amount: string }>> = {
  capture: (p) => ({ bucket: "captured", amount: p.input["amount"]! }),
  return: (p) => ({ bucket: "returned", amount: p.input["amount"]! }),
  void: () => ({ bucket: "voided", amount: "10.00" }),
  payoutPay: () => ({ bucket: "paidOut", amount: "5.00" })
}

/** The ledger's figures after the dust settles: the money moved exactly as often as the order shows, and no invariant broke. */
function judgeLedger(sim: Simulator, op: MatrixOp, p: Prepared, count: number, problems: Array<string>): void {
  for (const v of sim.checkInvariants()) problems.push(`ledger invariant ${v.invariant}: ${v.detail}`)
  const expect = LEDGER[op.method]?.(p)
  if (expect === undefined || p.orderid === undefined) return
  const order = sim.order(p.orderid)
  const want = count === 0 ? "0.00" : expect.amount
  if (order?.[expect.bucket] !== want) problems.push(`ledger ${expect.bucket} ${String(order?.[expect.bucket])}, expected ${want} after ${count} ${op.txType}(s)`)
}

async function runCase(op: MatrixOp, fault: Fault, reaction: Reaction): Promise<CaseResult> {
  const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
  const problems: Array<string> = []
  const answers: Array<Answer> = []
  try {
    const clean = createPayClient(clientOptions(sim))
    const p = await op.prepare(clean)
    const { pay, arm: armWrapper } = faultyClient(sim, op, fault)
    const record = async (label: string, call: Promise<unknown>) => {
      const r = await settle(call)
      const a = { label, r, countAtAnswer: countMoved(sim, op, p).count }
      answers.push(a)
      judgeAnswer(a, problems)
      return r
    }
    const signal = arm(sim, op, fault, armWrapper)
    const first = await record("first", callOp(pay, op, p.input, signal === undefined ? {} : { signal }))
    sim.faults.clear()
    const key = first.ok ? first.value["idempotencyKey"] : first.error["idempotencyKey"]
    if (reaction === "again" && !first.ok) await record("again", callOp(pay, op, p.input))
    if (reaction === "same-key") {
      const again = await record("same-key", callOp(pay, op, p.input, { idempotencyKey: key as string }))
      if (first.ok && again.ok && JSON.stringify(again.value) !== JSON.stringify(first.value)) problems.push("same-key: not a replay of the first result")
    }
    if (reaction === "awaitFinal") await awaitAndJudge(sim, pay, op, p, first, problems)
    // Let any request the gateway still held land before the last word.
    await sleep(LATENCY_MS + 30)
    await sim.clock.advance(60_000)
    const final = countMoved(sim, op, p)
    if (final.count > 1) problems.push(`money moved ${final.count} times`)
    if (final.orders > 1) problems.push(`${final.orders} orders for one client_orderid`)
    judgeLedger(sim, op, p, final.count, problems)
    const last = answers.at(-1)!
    if (!last.r.ok && last.r.error._tag === "OutcomeUnknown" && last.r.error["mayHaveApplied"] === false && final.count !== 0) {
      problems.push(`last answer said not applied, the order shows ${final.count}`)
    }
    return { name: `${op.method} × ${fault} × ${reaction}`, answers, finalCount: final.count, finalOrders: final.orders, problems }
  } finally {
    await sim.close()
  }
}

async function awaitAndJudge(sim: Simulator, pay: PromisePayClient, op: MatrixOp, p: Prepared, first: Settled, problems: Array<string>) {
  const orderid = p.orderid ?? (first.ok ? (first.value["paynet-order-id"] as string | undefined) : undefined)
  await sleep(LATENCY_MS + 30)
  // Unloaded this takes one poll (~15 ms); the budget is wide because on a loaded machine the event
  // loop stalls for over a second, and a real-time AwaitFinalTimeout there says nothing about money.
  const r = await settle(pay.awaitFinal({ client_orderid: p.client_orderid, orderid }, { stopOnRedirect: false, deadlineMs: 10_000 }))
  judgeAwaitFinal(sim, op, p, r, countMoved(sim, op, p).count, problems)
}

const results: Array<CaseResult> = []

describe("fault matrix: operation × fault × merchant reaction", () => {
  afterAll(() => {
    const tally = new Map<string, number>()
    for (const c of results) for (const a of c.answers) {
      const tag = a.r.ok ? String(a.r.value["type"]) : `${a.r.error._tag}${a.r.error._tag === "OutcomeUnknown" ? `(${String(a.r.error["mayHaveApplied"])})` : ""}`
      tally.set(tag, (tally.get(tag) ?? 0) + 1)
    }
    const doubles = results.filter((c) => c.finalCount > 1).length
    console.log(`fault matrix: cases ${results.length}, double moves ${doubles}, contradicted answers ${results.reduce((n, c) => n + c.problems.length, 0)}, answers ${JSON.stringify(Object.fromEntries(tally))}`)
  })

  for (const op of matrixOps) {
    it(`${op.method}: ${FAULTS.length} faults × ${REACTIONS.length} reactions`, async () => {
      const cases = FAULTS.flatMap((fault) => REACTIONS.map((reaction) => runCase(op, fault, reaction)))
      const done = await Promise.all(cases)
      results.push(...done)
      const problems = done.flatMap((c) => c.problems.map((p) => `${c.name}: ${p}`))
      expect(problems).toEqual([])
      // Every case ended with the money applied at most once, and most were proven applied.
      expect(done.every((c) => c.finalCount <= 1)).toBe(true)
      expect(done.filter((c) => c.finalCount === 1).length).toBeGreaterThan(done.length / 2)
    }, 60_000)
  }
})
