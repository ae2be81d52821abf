/**
 * The merchant's side of the chaos run: each flow drives the Promise client the way a careful
 * merchant would. Transient failures (OutcomeUnknown, TransportError, GatewayServerError, Timeout)
 * are expected under chaos and are handled by asking again with the SAME client_orderid; anything
 * else is an unexpected error. Full captures and full returns carry no amount, so resending one
 * after an unknown outcome can never move money twice: the simulator answers
 * capture-exceeds-authorized / return-exceeds-charged when the first one landed.
 */
import type { PromisePayClient } from "@paykit/client"
import { requests } from "@paykit/testkit"
import type { Ledger } from "./ledger"
import type { PlannedPayment } from "./plan"

type Loose = Record<string, unknown>

/** One transaction whose final status the merchant must learn. */
export interface Initiated {
  readonly clientOrderId: string
  readonly type: string
}

export interface UnexpectedError {
  readonly flow: string
  readonly step: string
  readonly tag: string
  readonly code?: string
  /** For an InputError: the field it names (never a value). */
  readonly field?: string
}

export interface MerchantContext {
  readonly pay: PromisePayClient
  readonly ledger: Ledger
  readonly callbackUrl: string
  readonly unexpected: UnexpectedError[]
  /** Finished transactions other flows may look up by status. */
  readonly known: Array<{ clientOrderId: string; orderid: string; type: string }>
  /** Transient failures the merchant rode out (counts by _tag). */
  readonly transient: Record<string, number>
  /** How often the delicate paths ran (reconciled replies, resent captures/returns, "already done"). */
  readonly paths: Record<string, number>
  /**
   * Fault-matrix cases the run met, as the fault matrix of the client's tests names them:
   * `operation × fault × merchant reaction` → how often (see {@link countCase}).
   */
  readonly cases: Record<string, number>
}

const count = (ctx: MerchantContext, path: string) => {
  ctx.paths[path] = (ctx.paths[path] ?? 0) + 1
}

/** Steps that move money: where a fault is a fault-matrix case (reads and the ACS page are not). */
const MONEY_STEPS = new Set(["sale", "preauth", "capture", "return", "makeRebill", "payout"])

/**
 * Counts one fault-matrix case: a money-moving `operation` met a `fault` (the error the merchant
 * got, or the cause the client reconciled by itself) and the merchant reacted with `reaction` (the
 * same call again, accepting the reconciled answer, a resend after status showed it never landed,
 * or accepting "already done"). The run's audit then checks from the simulator's ledger that no
 * money moved twice and that every answer believed was true.
 */
export function countCase(ctx: MerchantContext, operation: string, fault: string, reaction: string): void {
  if (!MONEY_STEPS.has(operation)) return
  const key = `${operation} × ${fault} × ${reaction}`
  ctx.cases[key] = (ctx.cases[key] ?? 0) + 1
}

const TRANSIENT = new Set(["OutcomeUnknown", "TransportError", "GatewayServerError", "Timeout"])
const MAX_STEP_ATTEMPTS = 12

class FlowAborted extends Error {}

/** Records an unexpected turn of a flow and stops the flow. */
function abort(ctx: MerchantContext, flow: string, step: string, tag: string): never {
  ctx.unexpected.push({ flow, step, tag })
  throw new FlowAborted(`${flow}/${step}: ${tag}`)
}

const tagOf = (e: unknown): string => (typeof e === "object" && e !== null && typeof (e as Loose)["_tag"] === "string" ? String((e as Loose)["_tag"]) : "untyped")
const codeOf = (e: unknown): string | undefined => {
  const code = typeof e === "object" && e !== null ? (e as Loose)["errorCode"] : undefined
  return typeof code === "string" ? code : undefined
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Runs one step until it succeeds, riding out transient failures with backoff. `accept` may turn a
 * typed refusal into a result (e.g. "already captured"). Anything else aborts the flow as unexpected.
 */
async function step<T>(ctx: MerchantContext, flow: string, name: string, run: () => Promise<T>, accept?: (e: unknown) => T | undefined): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      const reply = await run()
      const r = reply as Loose | undefined
      if (typeof r === "object" && r !== null && r["type"] === "reconciled") countCase(ctx, name, `${String(r["reason"] ?? "unknown")} (reconciled)`, "accepted the reconciled answer")
      return reply
    } catch (error) {
      const accepted = accept?.(error)
      if (accepted !== undefined) return accepted
      const tag = tagOf(error)
      if (TRANSIENT.has(tag) && attempt < MAX_STEP_ATTEMPTS) {
        ctx.transient[tag] = (ctx.transient[tag] ?? 0) + 1
        countCase(ctx, name, tag, "the same call again")
        await sleep(Math.min(1000, 25 * 2 ** attempt))
        continue
      }
      const code = codeOf(error)
      const field = typeof error === "object" && error !== null ? (error as Loose)["field"] : undefined
      ctx.unexpected.push({ flow, step: name, tag, ...(code === undefined ? {} : { code }), ...(typeof field === "string" ? { field } : {}) })
      throw new FlowAborted(`${flow}/${name}: ${tag}`)
    }
  }
}

/** The orderid of a reply (direct or reconciled). */
function orderIdOf(reply: unknown): string | undefined {
  const id = (reply as Loose)["paynet-order-id"]
  return typeof id === "string" && id !== "" ? id : undefined
}

/**
 * Waits for the final status of the order's current transaction and records it. `ActionRequired`
 * (a pending 3DS challenge) is returned to the 3DS flow; anywhere else it is a surprise.
 */
async function awaitFinal(ctx: MerchantContext, flow: string, clientOrderId: string, orderid: string | undefined): Promise<Loose> {
  const query = orderid === undefined ? { client_orderid: clientOrderId } : { client_orderid: clientOrderId, orderid }
  const result = (await step(ctx, flow, "awaitFinal", () => ctx.pay.awaitFinal(query))) as unknown as Loose
  if (result["_tag"] === "Final") {
    ctx.ledger.learn(clientOrderId, result["transaction-type"] as string | undefined, String(result["status"]), "await")
    return result
  }
  if (flow === "3ds-sale") return result
  return abort(ctx, flow, "awaitFinal", "NotFinal")
}

function base(ctx: MerchantContext, p: PlannedPayment) {
  return { client_orderid: p.clientOrderId, amount: p.amount, currency: p.currency, server_callback_url: ctx.callbackUrl }
}

async function charge(ctx: MerchantContext, p: PlannedPayment, kind: "sale" | "preauth", card: string): Promise<{ orderid: string | undefined; reply: unknown }> {
  const fields = requests.sale({ ...base(ctx, p), credit_card_number: card })
  ctx.ledger.intend({ clientOrderId: p.clientOrderId, type: kind, amount: p.amount, currency: p.currency })
  const reply = await step(ctx, p.flow, kind, () => (kind === "sale" ? ctx.pay.sale(fields) : ctx.pay.preauth(fields)))
  if ((reply as Loose)["type"] === "reconciled") count(ctx, `${kind}: reconciled`)
  return { orderid: orderIdOf(reply), reply }
}

/** Capture or return in full; resent while status shows it did not land. */
async function fullFollowUp(ctx: MerchantContext, p: PlannedPayment, kind: "capture" | "return", orderid: string): Promise<void> {
  const already = kind === "capture" ? "capture-exceeds-authorized" : "return-exceeds-charged"
  const input = { client_orderid: p.clientOrderId, orderid }
  // A full capture or return carries no amount: the merchant means the whole charge.
  ctx.ledger.intend({ clientOrderId: p.clientOrderId, type: kind, amount: p.amount, currency: p.currency })
  for (let attempt = 0; attempt < MAX_STEP_ATTEMPTS; attempt++) {
    const send = (): Promise<unknown> => (kind === "capture" ? ctx.pay.capture(input) : ctx.pay.return(input))
    const reply = (await step<unknown>(ctx, p.flow, kind, send, (e) =>
      tagOf(e) === "GatewayValidationError" && codeOf(e) === already ? ({ type: "already" } as Loose) : undefined)) as Loose
    if (reply["type"] === "already") {
      count(ctx, `${kind}: already done (resend refused)`)
      countCase(ctx, kind, "already applied", "accepted the refusal")
    }
    if (reply["type"] !== "reconciled") return
    // Reconciled: status tells whether OUR capture/return exists (it is then the last transaction).
    const statusReply = reply["statusReply"] as Loose
    if (statusReply["transaction-type"] === kind) {
      count(ctx, `${kind}: reconciled, landed`)
      return
    }
    count(ctx, `${kind}: reconciled, not landed → resent`)
    countCase(ctx, kind, "not landed (reconciled)", "sent again")
  }
  abort(ctx, p.flow, kind, "NeverLanded")
}

/** Answers the 3DS access-control page over HTTP like a browser would. */
async function answerAcs(ctx: MerchantContext, p: PlannedPayment, url: string): Promise<void> {
  await step(ctx, p.flow, "acs", async () => {
    let response: Response
    try {
      response = await fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: `result=${p.acs}` })
    } catch {
      throw { _tag: "TransportError" }
    }
    await response.text()
    // 200: the final redirect page. 409: already decided (an earlier attempt landed).
    if (response.status !== 200 && response.status !== 409) throw { _tag: "UnexpectedAcsStatus" }
  })
}

export async function runPayment(ctx: MerchantContext, p: PlannedPayment): Promise<void> {
  try {
    await runFlow(ctx, p)
  } catch (error) {
    if (!(error instanceof FlowAborted)) ctx.unexpected.push({ flow: p.flow, step: "flow", tag: tagOf(error) })
  }
}

async function runFlow(ctx: MerchantContext, p: PlannedPayment): Promise<void> {
  const coid = p.clientOrderId
  switch (p.flow) {
    case "sale":
    case "status-lookup": {
      const { orderid } = await charge(ctx, p, "sale", p.card)
      const final = await awaitFinal(ctx, p.flow, coid, orderid)
      ctx.known.push({ clientOrderId: coid, orderid: String(final["paynet-order-id"]), type: "sale" })
      if (p.flow === "status-lookup") {
        for (const index of p.lookups) {
          const target = ctx.known[index % ctx.known.length]!
          const reply = (await step(ctx, p.flow, "status", () => ctx.pay.status({ client_orderid: target.clientOrderId, orderid: target.orderid }))) as unknown as Loose
          ctx.ledger.learn(target.clientOrderId, reply["transaction-type"] as string | undefined, String(reply["status"]), "status")
        }
      }
      return
    }
    case "3ds-sale": {
      const { orderid, reply } = await charge(ctx, p, "sale", "4000000000003220")
      let redirect = (reply as Loose)["redirect-url"] ?? ((reply as Loose)["statusReply"] as Loose | undefined)?.["redirect-to"]
      let final = await awaitFinal(ctx, p.flow, coid, orderid)
      if (final["_tag"] === "ActionRequired") redirect = final["redirectTo"]
      if (final["_tag"] !== "Final") {
        if (typeof redirect !== "string") abort(ctx, p.flow, "acs", "NoRedirect")
        await answerAcs(ctx, p, redirect)
        final = await awaitFinal(ctx, p.flow, coid, orderid)
        if (final["_tag"] !== "Final") abort(ctx, p.flow, "awaitFinal", "StillActionRequired")
      }
      return
    }
    case "preauth-capture": {
      const { orderid } = await charge(ctx, p, "preauth", p.card)
      const final = await awaitFinal(ctx, p.flow, coid, orderid)
      if (final["status"] !== "approved") return
      await fullFollowUp(ctx, p, "capture", String(final["paynet-order-id"]))
      await awaitFinal(ctx, p.flow, coid, String(final["paynet-order-id"]))
      return
    }
    case "sale-return": {
      const { orderid } = await charge(ctx, p, "sale", p.card)
      const final = await awaitFinal(ctx, p.flow, coid, orderid)
      if (final["status"] !== "approved") return
      await fullFollowUp(ctx, p, "return", String(final["paynet-order-id"]))
      await awaitFinal(ctx, p.flow, coid, String(final["paynet-order-id"]))
      return
    }
    case "rebill": {
      const { orderid } = await charge(ctx, p, "sale", "5555555555554444")
      const final = await awaitFinal(ctx, p.flow, coid, orderid)
      const saleId = String(final["paynet-order-id"])
      const ref = (await step(ctx, p.flow, "createCardRef", () => ctx.pay.createCardRef({ client_orderid: coid, orderid: saleId }))) as unknown as Loose
      const cardrefid = ref["card-ref-id"] ?? (ref["statusReply"] as Loose | undefined)?.["card-ref-id"]
      let refId = typeof cardrefid === "string" ? cardrefid : undefined
      // A reconciled reply whose status does not show the ref yet: ask again (the same sale gives the same ref).
      for (let i = 0; refId === undefined && i < MAX_STEP_ATTEMPTS; i++) {
        const again = (await step(ctx, p.flow, "createCardRef", () => ctx.pay.createCardRef({ client_orderid: coid, orderid: saleId }))) as unknown as Loose
        const id = again["card-ref-id"] ?? (again["statusReply"] as Loose | undefined)?.["card-ref-id"]
        refId = typeof id === "string" ? id : undefined
      }
      if (refId === undefined) abort(ctx, p.flow, "createCardRef", "NoCardRef")
      const rebillId = p.rebillClientOrderId!
      const rebill = requests.makeRebill({ client_orderid: rebillId, cardrefid: refId, amount: p.amount, currency: p.currency, server_callback_url: ctx.callbackUrl })
      ctx.ledger.intend({ clientOrderId: rebillId, type: "rebill", amount: p.amount, currency: p.currency })
      const reply = await step(ctx, p.flow, "makeRebill", () => ctx.pay.makeRebill(rebill))
      await awaitFinal(ctx, p.flow, rebillId, orderIdOf(reply))
      return
    }
    case "payout": {
      const fields = requests.payout({ ...base(ctx, p), credit_card_number: p.card })
      ctx.ledger.intend({ clientOrderId: p.clientOrderId, type: "payout", amount: p.amount, currency: p.currency })
      const reply = await step(ctx, p.flow, "payout", () => ctx.pay.payout(fields))
      await awaitFinal(ctx, p.flow, coid, orderIdOf(reply))
      return
    }
  }
}
