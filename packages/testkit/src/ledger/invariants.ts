/**
 * The invariants of decision 10 as code. They hold at every instant, in-flight reservations
 * included; a violation is a simulator bug, never a merchant error.
 *
 * @packageDocumentation
 */
import { BUCKETS, type Ledger, type LedgerTotals, type Violation } from "./types"
import { ORIGINALS, RULES, totalsOf } from "./rules"

function live(state: string): boolean {
  return state !== "released"
}

/** Committed plus in flight in one bucket. */
function all(t: LedgerTotals, b: (typeof BUCKETS)[number]): bigint {
  return t[b] + t.pending[b]
}

// Runs on every ledger change (twice per payment): plain loops, no closures or filtered arrays.
/** Every invariant the ledger breaks (empty when its money adds up). */
export function checkInvariants(ledger: Ledger): Violation[] {
  const out: Violation[] = []
  const t: LedgerTotals = totalsOf(ledger)
  const entries = ledger.entries

  for (const e of entries) {
    if (e.amount < 0n) out.push({ invariant: "non-negative", detail: `transaction ${e.tx} (${e.op}) has amount ${e.amount}` })
    const moves = e.moves
    for (const bucket in moves) {
      const amount = moves[bucket as keyof typeof moves]
      if ((amount as bigint) < 0n) out.push({ invariant: "non-negative", detail: `transaction ${e.tx} (${e.op}) moves ${amount} into ${bucket}` })
    }
    if (!RULES[e.op].on.includes(ledger.kind)) out.push({ invariant: "operation-fits-kind", detail: `${e.op} (transaction ${e.tx}) on a ${ledger.kind} order` })
  }
  const original = entries[0]
  for (let i = 1; i < entries.length; i++) {
    const e = entries[i]!
    if (ORIGINALS.has(e.op)) out.push({ invariant: "one-original", detail: `a second original ${e.op} (transaction ${e.tx})` })
    if (live(e.state) && original?.state !== "committed") {
      out.push({ invariant: "nothing-before-approval", detail: `${e.op} (transaction ${e.tx}) while the original is ${original?.state ?? "missing"}` })
    }
  }
  if (original !== undefined && !ORIGINALS.has(original.op)) out.push({ invariant: "one-original", detail: `the first entry is ${original.op}` })

  // Each bucket's committed + in flight, summed once (bigint sums allocate; the checks read them twice).
  const authorized = all(t, "authorized")
  const captured = all(t, "captured")
  const holdReleased = all(t, "holdReleased")
  const returned = all(t, "returned")
  const chargedBack = all(t, "chargedBack")
  const voided = all(t, "voided")
  if (captured > authorized) {
    out.push({ invariant: "captures-within-authorized", detail: `captured ${t.captured} + in flight ${t.pending.captured} > authorized ${authorized}` })
  }
  if (captured + holdReleased > authorized) {
    out.push({ invariant: "captures-and-releases-within-authorized", detail: `captured ${captured} + hold released ${holdReleased} > authorized ${authorized}` })
  }
  const takenBack = returned + chargedBack + voided
  if (takenBack > t.captured) {
    out.push({ invariant: "refunds-within-captured", detail: `returned ${returned} + charged back ${chargedBack} + voided ${voided} (in flight included) > captured ${t.captured}` })
  }

  let voids = 0
  let theVoid: (typeof entries)[number] | undefined
  let chargebacks = 0
  let paid = 0
  let inFlight = 0n
  for (const e of entries) {
    const isLive = live(e.state)
    if (e.op === "void" && isLive && voids++ === 0) theVoid = e
    if (e.op === "chargeback" && isLive) chargebacks++
    if ((e.op === "payout" || e.op === "payout-pay") && isLive) paid++
    if (e.state === "in-flight") inFlight += e.amount
  }
  if (voids > 1) out.push({ invariant: "one-void", detail: `${voids} voids` })
  if (theVoid !== undefined) {
    for (const e of entries) {
      if (e.tx > theVoid.tx && live(e.state)) out.push({ invariant: "nothing-after-void", detail: `${e.op} (transaction ${e.tx}) after the void (transaction ${theVoid.tx})` })
      if (e !== theVoid && e.state === "in-flight" && e.tx < theVoid.tx) out.push({ invariant: "void-alone", detail: `${e.op} (transaction ${e.tx}) still processing beside the void` })
    }
    if (theVoid.state === "committed") {
      const left = t.captured - t.returned - t.chargedBack - t.voided
      const hold = t.authorized - t.captured - t.holdReleased
      if (left !== 0n || (ledger.kind === "preauth" && hold !== 0n)) out.push({ invariant: "void-reverses-all", detail: `after the void ${left} stays captured and ${hold} held` })
    }
  }
  if (chargebacks > 0 && !ledger.settled) out.push({ invariant: "chargeback-after-settlement", detail: "a chargeback on an unsettled order" })
  if (paid > 1) out.push({ invariant: "paid-once", detail: `${paid} payouts on one order` })
  if (inFlight !== t.inFlight || inFlight < 0n) out.push({ invariant: "in-flight-sum", detail: `in flight ${t.inFlight} ≠ ${inFlight}` })
  return out
}
