/**
 * The money-moving operations of the fault matrix: how to prepare the order each needs, how to call
 * it, and how to count, from the simulator's own order view, the transactions that moved money.
 */
import { operations, type OperationId } from "@paykit/contracts"
import type { Simulator } from "@paykit/testkit"
import type { CallOptions, PromisePayClient } from "../../src/index"
import { coid, saleInput } from "./fixtures"

/** What a prepared case carries. */
export interface Prepared {
  readonly input: Record<string, string>
  /** Where the money of this call shows: the order (existing-order calls) or the client_orderid (new orders). */
  readonly client_orderid: string
  readonly orderid?: string | undefined
}

/** One operation of the matrix. */
export interface MatrixOp {
  readonly method: string
  readonly id: OperationId
  /** The transaction type this call adds when it lands. */
  readonly txType: string
  /** Creates what the call needs, with a fault-free client. */
  readonly prepare: (pay: PromisePayClient) => Promise<Prepared>
}

const MOVED = new Set(["approved", "processing"])

/** Transactions of the call's type that moved (or are moving) money, from the simulator's order view. */
export function countMoved(sim: Simulator, op: MatrixOp, p: Prepared): { count: number; orders: number } {
  const orders = p.orderid !== undefined
    ? [sim.order(p.orderid)].filter((o) => o !== undefined)
    : sim.orders().filter((o) => o.client_orderid === p.client_orderid)
  const count = orders.flatMap((o) => o!.transactions).filter((t) => t.type === op.txType && MOVED.has(t.status)).length
  return { count, orders: orders.length }
}

/** Calls the operation by its method name. */
export function callOp(pay: PromisePayClient, op: MatrixOp, input: Record<string, string>, options: CallOptions = {}): Promise<unknown> {
  return (pay as unknown as Record<string, (i: unknown, o: CallOptions) => Promise<unknown>>)[op.method]!(input, options)
}

/** The path prefix of an operation (for the fault-injecting fetch wrapper). */
export const pathOf = (id: OperationId): string => operations[id].path.replace("{endpointId}", "")

async function approved(pay: PromisePayClient, kind: "sale" | "preauth") {
  const input = saleInput()
  const ack = await pay[kind](input)
  const orderid = ack["paynet-order-id"]!
  await pay.awaitFinal({ client_orderid: input.client_orderid, orderid })
  return { client_orderid: input.client_orderid, orderid }
}

const newOrder = (input: Record<string, string>, field = "client_orderid"): Prepared => ({ input, client_orderid: input[field]! })

/** The operations: every order-creating money call and every money call on an existing order. */
export const matrixOps: ReadonlyArray<MatrixOp> = [
  { method: "sale", id: "SALE", txType: "sale", prepare: async () => newOrder(saleInput()) },
  { method: "preauth", id: "PREAUTH", txType: "preauth", prepare: async () => newOrder(saleInput()) },
  {
    method: "makeRebill", id: "REBILL", txType: "rebill",
    prepare: async (pay) => {
      const { client_orderid, orderid } = await approved(pay, "sale")
      const ref = await pay.createCardRef({ client_orderid, orderid })
      const cardrefid = ref.type === "reconciled" ? ref.statusReply["card-ref-id"]! : ref["card-ref-id"]
      return newOrder({ client_orderid: coid("rb"), cardrefid, amount: "3.00", currency: "USD", order_desc: "rebill", ipaddress: "127.0.0.1" })
    }
  },
  {
    method: "payout", id: "PAYOUT", txType: "payout",
    prepare: async () => newOrder({ client_orderid: coid("po"), amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
  },
  {
    method: "transfer", id: "TRANSFER_V4", txType: "transfer",
    prepare: async () => newOrder({ client_orderid: coid("tr"), amount: "1.00", currency: "USD", order_desc: "t", ipaddress: "127.0.0.1", redirect_url: "https://shop.example.com/r", credit_card_number: "4111111111111111", cvv2: "123", expire_month: "12", expire_year: "2030", card_printed_name: "JOHN DOE", "destination-card-no": "5555555555554444" })
  },
  {
    method: "capture", id: "CAPTURE", txType: "capture",
    prepare: async (pay) => {
      const o = await approved(pay, "preauth")
      return { ...o, input: { ...o, amount: "4.00", currency: "USD" } }
    }
  },
  {
    method: "return", id: "RETURN", txType: "return",
    prepare: async (pay) => {
      const o = await approved(pay, "sale")
      return { ...o, input: { ...o, amount: "4.00", currency: "USD" } }
    }
  },
  {
    method: "void", id: "VOID", txType: "void",
    prepare: async (pay) => {
      const o = await approved(pay, "sale")
      return { ...o, input: { ...o } }
    }
  },
  {
    method: "payoutPay", id: "PAYOUT_V4_PAY", txType: "payout",
    prepare: async (pay) => {
      const client_orderid = coid("pp")
      const checked = await pay.payoutCheck({ client_orderid, amount: "5.00", currency: "USD", credit_card_number: "4111111111111111", card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "2030" })
      const orderid = checked.type === "reconciled" ? checked["paynet-order-id"] : checked["paynet-order-id"]!
      return { client_orderid, orderid, input: { client_orderid, orderid } }
    }
  }
]
