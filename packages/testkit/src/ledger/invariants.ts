/**
 * The invariants of decision 10 as code. They hold at every instant, in-flight reservations
 * included; a violation is a simulator bug, never a merchant error.
 *
 * @packageDocumentation
 */
import { BUCKETS, type Ledger, type LedgerTotals, type Violation } from "./types"
import { ORIGINALS, RULES, totalsOf } from "./rules"

const live = (state: string): boolean => state !== "released"

/** Every invariant the ledger breaks (empty when its money adds up). */
export function checkInvariants(ledger: Ledger): Violation[] {
  const out: Violation[] = []
  const fail = (invariant: string, detail: string): void => void out.push({ invariant, detail })
  const t: LedgerTotals = totalsOf(ledger)
  const all = (b: (typeof BUCKETS)[number]): bigint => t[b] + t.pending[b]

  for (const e of ledger.entries) {
    if (e.amount < 0n) fail("non-negative", `transaction ${e.tx} (${e.op}) has amount ${e.amount}`)
    for (const [bucket, amount] of Object.entries(e.moves)) {
      if ((amount as bigint) < 0n) fail("non-negative", `transaction ${e.tx} (${e.op}) moves ${amount} into ${bucket}`)
    }
    if (!RULES[e.op].on.includes(ledger.kind)) fail("operation-fits-kind", `${e.op} (transaction ${e.tx}) on a ${ledger.kind} order`)
  }
  const original = ledger.entries[0]
  ledger.entries.forEach((e, i) => {
    if (i > 0 && ORIGINALS.has(e.op)) fail("one-original", `a second original ${e.op} (transaction ${e.tx})`)
    if (i > 0 && live(e.state) && original?.state !== "committed") {
      fail("nothing-before-approval", `${e.op} (transaction ${e.tx}) while the original is ${original?.state ?? "missing"}`)
    }
  })
  if (original !== undefined && !ORIGINALS.has(original.op)) fail("one-original", `the first entry is ${original.op}`)

  const authorized = all("authorized")
  if (all("captured") > authorized) {
    fail("captures-within-authorized", `captured ${t.captured} + in flight ${t.pending.captured} > authorized ${authorized}`)
  }
  if (all("captured") + all("holdReleased") > authorized) {
    fail("captures-and-releases-within-authorized", `captured ${all("captured")} + hold released ${all("holdReleased")} > authorized ${authorized}`)
  }
  const takenBack = all("returned") + all("chargedBack") + all("voided")
  if (takenBack > t.captured) {
    fail("refunds-within-captured", `returned ${all("returned")} + charged back ${all("chargedBack")} + voided ${all("voided")} (in flight included) > captured ${t.captured}`)
  }

  const voids = ledger.entries.filter((e) => e.op === "void" && live(e.state))
  if (voids.length > 1) fail("one-void", `${voids.length} voids`)
  const theVoid = voids[0]
  if (theVoid !== undefined) {
    for (const e of ledger.entries) {
      if (e.tx > theVoid.tx && live(e.state)) fail("nothing-after-void", `${e.op} (transaction ${e.tx}) after the void (transaction ${theVoid.tx})`)
      if (e !== theVoid && e.state === "in-flight" && e.tx < theVoid.tx) fail("void-alone", `${e.op} (transaction ${e.tx}) still processing beside the void`)
    }
    if (theVoid.state === "committed") {
      const left = t.captured - t.returned - t.chargedBack - t.voided
      const hold = t.authorized - t.captured - t.holdReleased
      if (left !== 0n || (ledger.kind === "preauth" && hold !== 0n)) fail("void-reverses-all", `after the void ${left} stays captured and ${hold} held`)
    }
  }
  const chargebacks = ledger.entries.filter((e) => e.op === "chargeback" && live(e.state))
  if (chargebacks.length > 0 && !ledger.settled) fail("chargeback-after-settlement", "a chargeback on an unsettled order")
  const paid = ledger.entries.filter((e) => (e.op === "payout" || e.op === "payout-pay") && live(e.state))
  if (paid.length > 1) fail("paid-once", `${paid.length} payouts on one order`)
  let inFlight = 0n
  for (const e of ledger.entries) if (e.state === "in-flight") inFlight += e.amount
  if (inFlight !== t.inFlight || inFlight < 0n) fail("in-flight-sum", `in flight ${t.inFlight} ≠ ${inFlight}`)
  return out
}
