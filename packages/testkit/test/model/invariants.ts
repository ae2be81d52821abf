/**
 * Decision 10's invariants, checked on what the simulator SHOWS (`GET /__sim/orders/{orderid}`),
 * from outside: the ledger fields (`authorized`, `captured`, `returned`, `holdReleased`,
 * `inFlight`, major-unit strings) against each other and against the transactions listed beside
 * them, in-flight amounts included. Needs no model: every view must pass at every instant.
 */
import { cents } from "./money"

/** The parts of an order view these checks read. */
export interface LedgerView {
  readonly orderid: string
  readonly kind: string
  readonly status: string
  readonly amount: string
  readonly authorized?: string
  readonly captured?: string
  readonly returned?: string
  readonly holdReleased?: string
  readonly inFlight?: string
  readonly transactions: ReadonlyArray<{ readonly type: string; readonly status: string; readonly amount?: string }>
}

/** The ledger fields in cents; throws when one is missing or malformed (that is a finding too). */
export function ledgerOf(view: LedgerView) {
  const field = (name: "authorized" | "captured" | "returned" | "holdReleased" | "inFlight") => cents(view[name], `order ${view.orderid} ${name}`)
  return {
    authorized: field("authorized"),
    captured: field("captured"),
    returned: field("returned"),
    holdReleased: field("holdReleased"),
    inFlight: field("inFlight")
  }
}

/** Every invariant the view breaks, as sentences (empty: its money adds up). */
export function invariantViolations(view: LedgerView): string[] {
  const out: string[] = []
  const fail = (text: string) => void out.push(`order ${view.orderid} (${view.kind}): ${text}`)
  let ledger: ReturnType<typeof ledgerOf>
  try {
    ledger = ledgerOf(view)
  } catch (error) {
    return [(error as Error).message]
  }
  const { authorized, captured, returned, holdReleased, inFlight } = ledger
  const amount = cents(view.amount, `order ${view.orderid} amount`)
  const sum = (type: string, status: string) => view.transactions.filter((t) => t.type === type && t.status === status).reduce((s, t) => s + (t.amount === undefined ? 0n : cents(t.amount, `order ${view.orderid} ${type} amount`)), 0n)
  const capF = sum("capture", "processing")
  const capA = sum("capture", "approved")
  const retF = sum("return", "processing")
  const retA = sum("return", "approved")
  const original = view.transactions[0]
  const processingMoney = view.transactions.filter((t) => t.status === "processing" && t.type !== "void").reduce((s, t) => s + (t.amount === undefined ? 0n : cents(t.amount, "amount")), 0n)

  if (authorized > amount) fail(`authorized ${authorized} > the order's amount ${amount}`)
  if (inFlight < processingMoney) fail(`inFlight ${inFlight} < ${processingMoney} of transactions still processing`)
  if (original !== undefined && original.status !== "approved") {
    if (authorized + captured + returned + holdReleased !== 0n) fail(`money moved (authorized ${authorized}, captured ${captured}, returned ${returned}, hold released ${holdReleased}) while the original is ${original.status}`)
    if (view.transactions.length > 1) fail(`${view.transactions.length - 1} transactions after an original that is ${original.status}`)
  }
  if (view.kind === "preauth") {
    if (captured + capF > authorized) fail(`captures ${captured} + in flight ${capF} > authorized ${authorized}`)
    if (captured + capF + holdReleased > authorized) fail(`captures ${captured} + in flight ${capF} + hold released ${holdReleased} > authorized ${authorized}`)
    if (returned > captured) fail(`refunds ${returned} > captured ${captured}`)
    if (returned + holdReleased + retF > authorized) fail(`returned ${returned} + hold released ${holdReleased} + returns in flight ${retF} > authorized ${authorized}`)
    if (captured !== capA) fail(`captured ${captured} ≠ ${capA} of approved captures`)
    if (returned + holdReleased < retA || returned > retA) fail(`returned ${returned} + hold released ${holdReleased} do not account for ${retA} of approved returns`)
  }
  if (view.kind === "sale") {
    if (returned + retF > amount) fail(`refunds ${returned} + in flight ${retF} > the sale's ${amount}`)
    if (returned !== retA) fail(`returned ${returned} ≠ ${retA} of approved returns`)
    if (capA + capF > 0n) fail("a capture on a sale")
    if (holdReleased !== 0n) fail(`hold released ${holdReleased} on a sale`)
  }
  const voidAt = view.transactions.findIndex((t) => t.type === "void")
  if (voidAt >= 0) {
    const after = view.transactions.slice(voidAt + 1)
    if (after.some((t) => t.type === "void")) fail("a second void")
    const moved = after.filter((t) => t.type === "capture" || t.type === "return")
    if (moved.length > 0) fail(`${moved.map((t) => `${t.type} ${t.amount ?? ""} (${t.status})`).join(", ")} accepted after the void`)
    const beside = view.transactions.slice(1, voidAt).filter((t) => t.status === "processing")
    if (beside.length > 0) fail(`${beside.map((t) => t.type).join(", ")} still processing beside the void`)
  }
  return out
}
