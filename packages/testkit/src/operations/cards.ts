/**
 * Card references (v2 and v4) and card info. A card reference is made only from a payment in a
 * final status that carried card data; the same payment always gives the same reference.
 *
 * @packageDocumentation
 */
import { SimError, serialNumber } from "../http/replies"
import { findOrder, type Handler, type OpContext, type Reply } from "./context"

const FINAL = new Set(["approved", "declined", "filtered", "error"])

function createRef(ctx: OpContext): { id: string; orderid: string; clientOrderId: string } {
  const { engine, fields } = ctx
  const order = findOrder(ctx, fields["orderid"], fields["client_orderid"])
  const first = order.transactions[0]
  if (order.card === undefined || first === undefined || !FINAL.has(first.status)) {
    throw new SimError("card-ref-not-allowed", `orderid: ${order.orderid} is not a finished payment with card data`, order.clientOrderId)
  }
  let id = engine.cardRefByOrder.get(order.orderid)
  if (id === undefined) {
    id = engine.newRefId("CR")
    engine.cardRefs.set(id, { id, login: order.login, card: order.card, orderid: order.orderid })
    engine.cardRefByOrder.set(order.orderid, id)
  }
  order.cardRefId = id
  return { id, orderid: order.orderid, clientOrderId: order.clientOrderId }
}

function cardRefReply(ref: { id: string; orderid: string; clientOrderId: string }): Reply {
  return {
    type: "create-card-ref-response",
    status: "approved",
    "serial-number": serialNumber(),
    "merchant-order-id": ref.clientOrderId,
    "paynet-order-id": ref.orderid,
    "card-ref-id": ref.id
  }
}

const cardRef: Handler = (ctx) => cardRefReply(createRef(ctx))

const cardRefV4: Handler = (ctx) => {
  const ref = createRef(ctx)
  return { ...cardRefReply(ref), "unq-card-ref-id": `U${ref.id}` }
}

const cardInfo: Handler = (ctx) => {
  const ref = ctx.engine.cardRefs.get(ctx.fields["cardrefid"]!)
  if (ref === undefined || ref.login !== ctx.merchant.login) {
    throw new SimError("card-ref-not-found", `cardrefid: no card reference ${ctx.fields["cardrefid"]!}`)
  }
  const reply: Reply = {
    type: "get-card-info-response",
    "serial-number": serialNumber(),
    "card-ref-id": ref.id,
    bin: ref.card.bin,
    "last-four-digits": ref.card.last4,
    "masked-pan": ref.card.masked,
    "card-type": ref.card.brand,
    "expire-month": ref.card.expireMonth,
    "expire-year": ref.card.expireYear,
    "result-3d": ref.card.outcome === "threeds-challenge" ? "authenticated" : "not-enrolled"
  }
  if (ref.card.holder !== undefined) reply["card-printed-name"] = ref.card.holder.slice(0, 128)
  return reply
}

/** Handlers of this module by operation id. */
export const cardHandlers = {
  CARDREF: cardRef,
  CARDREF_V4: cardRefV4,
  CARDINFO: cardInfo
} as const satisfies Record<string, Handler>
