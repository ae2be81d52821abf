/**
 * Runs steps against the simulator (through {@link Harness}) and the reference model side by side.
 * Each step: the model predicts accept / refuse, the simulator answers, the verdicts must agree;
 * then every order's view must match the model and pass the invariants, and a `status` reply must
 * agree with the view. A pair is sent at once, interleaved by a fast-check scheduler; it must be
 * linearizable: some order of its two steps (for a clock advance: at some instant inside it) must
 * explain both answers and the state that follows. Any disagreement throws {@link ModelMismatch}
 * carrying the steps so far, printed as a test case to paste.
 */
import * as fc from "fast-check"
import { errorCodes } from "@paykit/contracts"
import { requests, testMerchant } from "../../src/index"
import { compareViews } from "./checks"
import { Harness, type HarnessConfig, type OrderJson, type WireReply } from "./harness"
import { cents } from "./money"
import { Model, type Prediction } from "./reference"
import { printTestCase } from "./printer"
import { CARD_NUMBER, stepText, type Step } from "./steps"

/** The simulator and model configuration of every run (tests, script and printed cases). */
export const MODEL_CONFIG: HarnessConfig = { processingDelayMs: 1000, settlementDelayMs: 20_000, startTime: Date.UTC(2027, 0, 1) }

/** The simulator and the model disagree; `message` holds the minimal steps as a vitest case. */
export class ModelMismatch extends Error {
  constructor(readonly problem: string, readonly steps: ReadonlyArray<Step>) {
    super(`${problem}\n\nSteps, as a test case to paste into packages/testkit/test/model/found.test.ts:\n\n${printTestCase(steps, problem)}\n`)
    this.name = "ModelMismatch"
  }
}

type Verdict = "accept" | "refuse"
type RequestStep = Exclude<Step, { op: "advance" | "restart" | "pair" }>

interface Sent {
  readonly step: Step
  readonly reply: WireReply
}

/** What the runs exercised: per step kind, how the model's verdict and the simulator's answer met. */
export const coverage: Record<string, number> = {}
const count = (key: string) => void (coverage[key] = (coverage[key] ?? 0) + 1)

export class ModelRun {
  model: Model
  readonly harness: Harness
  readonly log: Step[] = []
  /** The original request of each order (by orderid), for resends. */
  private readonly originals = new Map<string, Record<string, string>>()

  constructor(readonly config: HarnessConfig = MODEL_CONFIG) {
    this.harness = new Harness(config)
    this.model = new Model(config, config.startTime)
  }

  close(): Promise<void> {
    return this.harness.close()
  }

  private fail(problem: string): never {
    throw new ModelMismatch(problem, this.log.map((s) => structuredClone(s)))
  }

  /** Runs one step and checks everything after it. `scheduler` drives a pair (replays use `step.order`). */
  async step(step: Step, scheduler?: fc.Scheduler): Promise<void> {
    this.log.push(step)
    let after: (views: ReadonlyArray<OrderJson>) => string[] = () => []
    if (step.op === "advance") {
      const reply = await this.harness.advance(step.ms)
      if (reply.http !== 200) this.fail(`advance ${step.ms} answered ${reply.http}`)
      this.model.advance(step.ms)
    } else if (step.op === "restart") {
      await this.harness.restart()
      count("restart")
    } else if (step.op === "pair") {
      await this.pair(step, scheduler)
      return
    } else {
      const prediction = this.model.predict(step)
      const { reply } = await this.send(step)
      const verdict = this.verdictOf(step, reply)
      this.judge(step, prediction, verdict, reply)
      this.model.apply(step, prediction, verdict === "accept", this.newOrderId(step, reply))
      after = (views) => this.replyChecks(step, reply, views)
    }
    const views = await this.harness.orders()
    const problems = [...compareViews(this.model, views), ...after(views), ...(await this.ownInvariants())]
    // The public status of the order a step touched must tell the same story as its view.
    if ((step.op === "capture" || step.op === "void" || step.op === "return") && problems.length === 0) {
      const status = { op: "status" as const, order: step.order }
      problems.push(...this.replyChecks(status, (await this.send(status)).reply, views))
    }
    if (problems.length > 0) this.fail(`after ${stepText(step)}:\n  - ${problems.join("\n  - ")}`)
  }

  /** The simulator's own record of broken invariants must be empty too. */
  private async ownInvariants(): Promise<string[]> {
    const own = await this.harness.ownInvariants()
    return (own ?? []).map((v) => `the simulator's own checker: ${JSON.stringify(v)}`)
  }

  private newOrderId(step: Step, reply: WireReply): string | undefined {
    if (step.op !== "sale" && step.op !== "preauth") return undefined
    return String(reply.body["paynet-order-id"])
  }

  private judge(step: Step, prediction: Prediction, verdict: Verdict, reply: WireReply): void {
    count(`${step.op} ${prediction.verdict}→${verdict}`)
    if (process.env["PAYKIT_MODEL_COVERAGE"] === "2") count(`  ${prediction.why.replace(/[0-9]+/g, "N").slice(0, 60)} → ${verdict === "refuse" ? String(reply.body["error-code"]) : "200"}`)
    if (prediction.verdict === "either" || prediction.verdict === verdict) return
    this.fail(`${stepText(step)}: the model expects ${prediction.verdict} (${prediction.why}), the simulator answered ${describe(reply)}`)
  }

  private verdictOf(step: Step, reply: WireReply): Verdict {
    const body = reply.body
    if (reply.http === 400 && body["type"] === "validation-error" && typeof body["error-code"] === "string") {
      // A refused lifecycle step names a lifecycle rule of the spec's error-code table.
      const known = (errorCodes as Record<string, { category: string }>)[body["error-code"]]
      if (known === undefined) this.fail(`${stepText(step)}: refused with ${body["error-code"]}, which is not in the spec's error-code table`)
      if ((step.op === "capture" || step.op === "void" || step.op === "return") && known.category !== "lifecycle") {
        this.fail(`${stepText(step)}: refused with ${body["error-code"]} (${known.category}), expected a lifecycle error-code`)
      }
      if (typeof body["error-message"] !== "string" || body["error-message"] === "") this.fail(`${stepText(step)}: refused without an error-message`)
      return "refuse"
    }
    if (reply.http !== 200) this.fail(`${stepText(step)}: answered ${describe(reply)}`)
    const expectedType = step.op === "status" ? "status-response" : "async-response"
    if (body["type"] !== expectedType) this.fail(`${stepText(step)}: a 200 of type ${String(body["type"])}, expected ${expectedType}`)
    if (step.op === "capture" || step.op === "void" || step.op === "return") {
      const order = this.model.orders[step.order]!
      if (String(body["paynet-order-id"]) !== order.orderid) this.fail(`${stepText(step)}: accepted for order ${String(body["paynet-order-id"])}, sent for ${order.orderid}`)
      if (body["status"] !== "processing") this.fail(`${stepText(step)}: accepted with status ${String(body["status"])}, expected processing`)
    }
    if ((step.op === "sale" || step.op === "preauth") && body["status"] !== "processing") this.fail(`${stepText(step)}: accepted with status ${String(body["status"])}`)
    return "accept"
  }

  /** What a status or a resend answered must agree with the order's view. */
  private replyChecks(step: Step, reply: WireReply, views: ReadonlyArray<OrderJson>): string[] {
    if (step.op !== "status" && step.op !== "resend") return []
    const order = this.model.orders[step.order]!
    const view = views.find((v) => v.orderid === order.orderid)
    if (view === undefined) return []
    const body = reply.body
    const out: string[] = []
    const fail = (text: string) => void out.push(`${stepText(step)}: ${text}`)
    if (String(body["paynet-order-id"]) !== order.orderid) fail(`answered for order ${String(body["paynet-order-id"])}`)
    if (body["status"] !== view.status) fail(`answered status ${String(body["status"])}, the order is ${view.status} (a ${step.op} answers the order's current state)`)
    if (step.op === "status") {
      if (reply.http !== 200) return [`${stepText(step)}: answered ${describe(reply)}`]
      if (body["amount"] !== undefined && cents(body["amount"]) !== cents(view.amount)) fail(`amount ${String(body["amount"])}, the order's is ${view.amount}`)
      // Decision 10 on the public reply alone: captured ≤ authorised, refunds ≤ captured or charged.
      const captured = body["captured-amount"] === undefined ? undefined : cents(body["captured-amount"])
      const returned = body["returned-amount"] === undefined ? 0n : cents(body["returned-amount"])
      if (captured !== undefined && captured > cents(view.amount)) fail(`captured-amount ${String(body["captured-amount"])} > the order's ${view.amount}`)
      if (view.kind === "preauth" && returned > (captured ?? 0n) && returned > 0n && cents(view.holdReleased ?? "0") === 0n) fail(`returned-amount ${String(body["returned-amount"])} > captured-amount ${String(body["captured-amount"])}`)
      if (returned > cents(view.amount)) fail(`returned-amount ${String(body["returned-amount"])} > the order's ${view.amount}`)
      if (view.kind === "preauth" && view.captured !== undefined && (body["captured-amount"] === undefined || cents(body["captured-amount"]) !== cents(view.captured))) fail(`captured-amount ${String(body["captured-amount"])}, the ledger shows ${view.captured}`)
      if (view.returned !== undefined && body["returned-amount"] !== undefined && cents(body["returned-amount"]) !== cents(view.returned)) fail(`returned-amount ${String(body["returned-amount"])}, the ledger shows ${view.returned}`)
      if (view.holdReleased !== undefined && body["hold-released-amount"] !== undefined && cents(body["hold-released-amount"]) !== cents(view.holdReleased)) fail(`hold-released-amount ${String(body["hold-released-amount"])}, the ledger shows ${view.holdReleased}`)
    }
    return out
  }

  private async send(step: Step, scheduler?: fc.Scheduler, label?: string): Promise<Sent> {
    if (step.op === "advance") return { step, reply: await this.harness.advance(step.ms, scheduler, label ?? "advance") }
    if (step.op === "restart" || step.op === "pair") throw new Error(`${step.op} cannot be sent`)
    return { step, reply: await this.request(step, scheduler, label) }
  }

  private request(step: RequestStep, scheduler?: fc.Scheduler, label?: string): Promise<WireReply> {
    if (step.op === "sale" || step.op === "preauth") {
      const fields = (step.op === "sale" ? requests.sale : requests.preauth)({ amount: step.amount, currency: "USD", credit_card_number: CARD_NUMBER[step.card] })
      return this.harness.send(step.op === "sale" ? "SALE" : "PREAUTH", fields, scheduler, label ?? step.op).then((reply) => {
        if (reply.http === 200) this.originals.set(String(reply.body["paynet-order-id"]), fields)
        return reply
      })
    }
    const follow = step as Extract<Step, { op: "capture" | "void" | "return" | "status" | "resend" }>
    const order = this.model.orders[follow.order]!
    if (follow.op === "resend") {
      const fields = this.originals.get(order.orderid)!
      return this.harness.send(order.kind === "sale" ? "SALE" : "PREAUTH", fields, scheduler, label ?? step.op)
    }
    const fields: Record<string, string> = { login: testMerchant.login, client_orderid: this.originals.get(order.orderid)!["client_orderid"]!, orderid: order.orderid }
    const amount = "amount" in follow ? follow.amount : undefined
    if (amount !== undefined) {
      fields["amount"] = amount
      fields["currency"] = "USD"
    }
    const operation = ({ capture: "CAPTURE", void: "VOID", return: "RETURN", status: "STATUS" } as const)[follow.op]
    return this.harness.send(operation, fields, scheduler, label ?? follow.op)
  }

  /**
   * Two steps at once. The scheduler releases their start and their body in some order; the
   * result must match a serial order of the two (an advance: the other step at one of the instants
   * the clock passes through), verdicts and the state after it.
   */
  private async pair(step: Extract<Step, { op: "pair" }>, given?: fc.Scheduler): Promise<void> {
    const s = given ?? (step.order === undefined ? undefined : fc.schedulerFor(step.order))
    if (s === undefined) this.fail("a pair needs a scheduler or a recorded order")
    let settled = 0
    const track = <T>(p: Promise<T>) => p.finally(() => void settled++)
    const both = Promise.all([track(this.send(step.a, s, "a")), track(this.send(step.b, s, "b"))])
    both.catch(() => undefined)
    for (let spins = 0; settled < 2; spins++) {
      if (s.count() > 0) await s.waitNext(1)
      else await new Promise((resolve) => setImmediate(resolve))
      if (spins > 10_000) this.fail("a pair never finished")
    }
    const [a, b] = await both
    step.order = s.report().filter((r) => r.status !== "pending").map((r) => r.taskId)
    for (const sent of [a, b]) if (sent.step.op === "advance" && sent.reply.http !== 200) this.fail(`${stepText(step)}: the advance answered ${describe(sent.reply)}`)
    const views = await this.harness.orders()
    const candidates = this.linearizations(step.a, step.b)
    let firstProblem: string | undefined
    for (const sequence of candidates) {
      const model = this.model.clone()
      const trial = this.tryLinearization(model, sequence, new Map([[step.a, a.reply], [step.b, b.reply]]))
      if (typeof trial === "string") {
        firstProblem ??= trial
        continue
      }
      const problems = [...compareViews(model, views), ...(await this.ownInvariants())]
      if (problems.length === 0) {
        count(sequence.length === 2 ? (sequence[0] === step.a ? "pair: a first" : "pair: b first") : sequence[0] === 0 ? "pair: before the advance" : sequence[2] === 0 ? "pair: after the advance" : "pair: inside the advance")
        this.model = model
        return
      }
      firstProblem ??= `in the order ${sequence.map((x) => (typeof x === "number" ? `advance ${x}` : stepText(x))).join(" → ")}:\n  - ${problems.join("\n  - ")}`
    }
    this.fail(`${stepText(step)}: no serial order of the two explains what the simulator did (a: ${describe(a.reply)}; b: ${describe(b.reply)}); first: ${firstProblem ?? "none"}`)
  }

  /** Serial orders of a pair; a number is a clock advance by that many ms. */
  private linearizations(a: Step, b: Step): Array<Array<Step | number>> {
    const advance = a.op === "advance" ? a : b.op === "advance" ? b : undefined
    if (advance === undefined || a.op === b.op) return [[a, b], [b, a]].map((seq) => seq.map((x) => (x.op === "advance" ? x.ms : x)))
    const other = advance === a ? b : a
    const start = this.model.now
    const end = start + advance.ms
    const instants = new Set<number>([start, end])
    const { processingDelayMs, settlementDelayMs } = this.config
    for (const order of this.model.orders) {
      for (const tx of order.txs) {
        for (const at of [tx.acceptedAt + processingDelayMs, tx.acceptedAt + processingDelayMs + settlementDelayMs]) if (at > start && at < end) instants.add(at)
      }
    }
    return [...instants].sort((x, y) => x - y).map((at) => [at - start, other, end - at])
  }

  /** Runs a serial order on a copy of the model; a string says why the answers do not fit it. */
  private tryLinearization(model: Model, sequence: ReadonlyArray<Step | number>, replies: Map<Step, WireReply>): string | true {
    for (const item of sequence) {
      if (typeof item === "number") {
        model.advance(item)
        continue
      }
      const reply = replies.get(item)!
      const prediction = model.predict(item)
      // Anything but a 200 of the right type or a 400 validation-error fails at once, in any order.
      const verdict = item.op === "advance" ? "accept" : this.verdictOf(item, reply)
      if (prediction.verdict !== "either" && prediction.verdict !== verdict) return `${stepText(item)}: the model expects ${prediction.verdict} (${prediction.why}), the simulator answered ${describe(reply)}`
      model.apply(item, prediction, verdict === "accept", this.newOrderId(item, reply))
    }
    return true
  }
}

function describe(reply: WireReply): string {
  const b = reply.body
  return reply.http === 200 ? `200 ${String(b["type"])} ${String(b["status"])}` : `${reply.http} ${String(b["error-code"] ?? "")}: ${String(b["error-message"] ?? JSON.stringify(b).slice(0, 120))}`
}

/** Runs steps on a fresh simulator and model; throws {@link ModelMismatch} on the first disagreement. */
export async function replay(steps: ReadonlyArray<Step>, config: HarnessConfig = MODEL_CONFIG): Promise<void> {
  const run = new ModelRun(config)
  try {
    for (const step of steps) await run.step(structuredClone(step) as Step)
  } finally {
    await run.close()
  }
}
