/**
 * Decision 10's invariants checked from outside on the simulator's order views (the ledger fields
 * and the transactions beside them), in flight included, so they hold at any instant the run looks:
 * independent of the simulator's own checker (`sim.checkInvariants()`), which the audit reads too.
 */
import type { OrderView } from "@paykit/testkit"
import { milli } from "./money"

export interface ViewViolation {
  readonly orderid: string
  readonly invariant: string
  readonly detail: string
}

const CHARGE_KINDS = new Set(["sale", "rebill", "transfer"])

export function viewViolations(view: OrderView): ViewViolation[] {
  const out: ViewViolation[] = []
  const fail = (invariant: string, detail: string) => void out.push({ orderid: view.orderid, invariant, detail })
  let f: Record<"authorized" | "captured" | "returned" | "holdReleased" | "inFlight" | "voided" | "chargedBack" | "paidOut" | "amount", bigint>
  try {
    f = {
      amount: milli(view.amount, "amount"),
      authorized: milli(view.authorized, "authorized"),
      captured: milli(view.captured, "captured"),
      returned: milli(view.returned, "returned"),
      holdReleased: milli(view.holdReleased, "holdReleased"),
      inFlight: milli(view.inFlight, "inFlight"),
      voided: milli(view.voided, "voided"),
      chargedBack: milli(view.chargedBack, "chargedBack"),
      paidOut: milli(view.paidOut, "paidOut")
    }
  } catch (error) {
    fail("ledger-fields", (error as Error).message)
    return out
  }
  const processing = (type: string) => view.transactions.filter((t) => t.type === type && t.status === "processing").reduce((s, t) => s + (t.amount === undefined ? 0n : milli(t.amount)), 0n)
  const capF = processing("capture")
  const retF = processing("return")
  const moving = view.transactions.filter((t) => t.status === "processing" && t.type !== "void").reduce((s, t) => s + (t.amount === undefined ? 0n : milli(t.amount)), 0n)
  const original = view.transactions[0]

  if (f.authorized > f.amount) fail("authorized-within-amount", `authorized ${view.authorized} > amount ${view.amount}`)
  if (f.captured + capF + f.holdReleased > f.authorized) fail("captures-and-releases-within-authorized", `captured ${view.captured} + in flight ${capF} + hold released ${view.holdReleased} > authorized ${view.authorized}`)
  if (f.returned + f.voided + f.chargedBack > f.captured) fail("refunds-within-captured", `returned ${view.returned} + voided ${view.voided} + charged back ${view.chargedBack} > captured ${view.captured}`)
  if (CHARGE_KINDS.has(view.kind) && f.returned + retF > f.captured) fail("refunds-in-flight-within-captured", `returned ${view.returned} + returns in flight ${retF} > captured ${view.captured}`)
  if (CHARGE_KINDS.has(view.kind) && f.captured !== f.authorized) fail("charge-captured-at-once", `a ${view.kind} shows captured ${view.captured} and authorized ${view.authorized}`)
  if (f.paidOut > f.amount) fail("paid-once", `paid out ${view.paidOut} > amount ${view.amount}`)
  if (f.inFlight < moving) fail("in-flight-shown", `inFlight ${view.inFlight} < ${moving} of transactions still processing`)
  if (original !== undefined && original.status !== "approved" && original.status !== "processing") {
    const moved = f.authorized + f.captured + f.returned + f.holdReleased + f.paidOut
    if (moved !== 0n) fail("nothing-without-approval", `money moved while the original ${original.type} is ${original.status}`)
  }
  const voidAt = view.transactions.findIndex((t) => t.type === "void")
  if (voidAt >= 0 && view.transactions.slice(voidAt + 1).some((t) => t.type === "capture" || t.type === "return" || t.type === "void")) {
    fail("nothing-after-void", "a capture, return or void accepted after the void")
  }
  return out
}
