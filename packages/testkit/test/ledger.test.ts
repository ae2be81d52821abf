import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { BUCKETS, RULES, checkInvariants, commit, openLedger, release, reserve, returnOpFor, settle, totalsOf, type Ledger, type LedgerKind, type LedgerOp } from "../src/ledger/index"

/** Reserves or fails the test. */
function accept(ledger: Ledger, op: LedgerOp, tx: number, amount?: bigint): Ledger {
  const r = reserve(ledger, op, tx, amount)
  if (!r.ok) throw new Error(`${op} refused: ${r.refusal.code} ${r.refusal.message}`)
  expect(checkInvariants(r.ledger)).toEqual([])
  return r.ledger
}

function refusal(ledger: Ledger, op: LedgerOp, amount?: bigint): string {
  const r = reserve(ledger, op, ledger.entries.length, amount)
  return r.ok ? "accepted" : r.refusal.code
}

const approvedPreauth = (amount = 10000n) => commit(accept(openLedger("preauth"), "preauth", 0, amount), 0)
const approvedSale = (amount = 1000n) => commit(accept(openLedger("sale"), "sale", 0, amount), 0)

describe("ledger totals", () => {
  it("count a move into every bucket, committed, in flight and released, summed over entries", () => {
    for (const bucket of BUCKETS) {
      const entry = (tx: number, state: "in-flight" | "committed" | "released", amount: bigint) => ({ tx, op: "sale" as const, amount, moves: { [bucket]: amount }, state })
      const ledger: Ledger = { kind: "sale", settled: false, entries: [entry(0, "committed", 5n), entry(1, "committed", 2n), entry(2, "in-flight", 3n), entry(3, "released", 100n)] }
      const t = totalsOf(ledger)
      for (const other of BUCKETS) {
        expect([bucket, other, t[other]]).toEqual([bucket, other, other === bucket ? 7n : 0n])
        expect([bucket, other, t.pending[other]]).toEqual([bucket, other, other === bucket ? 3n : 0n])
      }
      expect(t.inFlight).toBe(3n)
    }
  })
})

describe("ledger: reserve on accept, commit on approval, release on decline", () => {
  it("a sale reserves in flight, then authorises and captures at once", () => {
    const reserved = accept(openLedger("sale"), "sale", 0, 1000n)
    expect(totalsOf(reserved)).toMatchObject({ authorized: 0n, captured: 0n, inFlight: 1000n })
    expect(totalsOf(commit(reserved, 0))).toMatchObject({ authorized: 1000n, captured: 1000n, inFlight: 0n })
    expect(totalsOf(release(reserved, 0))).toMatchObject({ authorized: 0n, captured: 0n, inFlight: 0n })
  })

  it("a declined capture gives its reservation back", () => {
    let l = accept(approvedPreauth(), "capture", 1, 3000n)
    expect(refusal(l, "capture", 7001n)).toBe("capture-exceeds-authorized")
    l = release(l, 1)
    expect(refusal(l, "capture", 10000n)).toBe("accepted")
  })

  it("committing twice, or an unknown transaction, is a bug that throws", () => {
    const l = approvedSale()
    expect(() => commit(l, 0)).toThrow(/already committed/)
    expect(() => release(l, 7)).toThrow(/no entry/)
  })
})

describe("ledger: decision 10 cases", () => {
  it("void is refused while a capture or a return is in flight", () => {
    expect(refusal(accept(approvedPreauth(), "capture", 1, 5000n), "void")).toBe("void-in-flight")
    expect(refusal(accept(approvedSale(), "refund", 1, 100n), "void")).toBe("void-in-flight")
    expect(refusal(accept(approvedPreauth(), "release", 1, 100n), "void")).toBe("void-in-flight")
  })

  it("a partial hold release leaves the rest capturable and voidable", () => {
    const l = commit(accept(approvedPreauth(), returnOpFor(approvedPreauth()), 1, 3000n), 1)
    expect(totalsOf(l)).toMatchObject({ authorized: 10000n, holdReleased: 3000n })
    expect(refusal(l, "capture", 7001n)).toBe("capture-exceeds-authorized")
    expect(refusal(l, "capture", 7000n)).toBe("accepted")
    expect(refusal(l, "void", 10000n)).toBe("void-partial-not-allowed")
    const voided = commit(accept(l, "void", 2), 2)
    expect(totalsOf(voided)).toMatchObject({ holdReleased: 10000n, captured: 0n, voided: 0n })
    expect(refusal(voided, "capture")).toBe("capture-not-allowed")
  })

  it("a void of exactly the whole open amount is accepted; any other amount is refused", () => {
    expect(refusal(approvedSale(1000n), "void", 1000n)).toBe("accepted")
    expect(refusal(approvedSale(1000n), "void", 999n)).toBe("void-partial-not-allowed")
    expect(refusal(approvedSale(1000n), "void", 1001n)).toBe("void-partial-not-allowed")
    const voided = commit(accept(approvedSale(1000n), "void", 1, 1000n), 1)
    expect(totalsOf(voided)).toMatchObject({ captured: 1000n, voided: 1000n })
    expect(refusal(voided, "refund")).toBe("return-not-allowed")
  })

  it("a return with nothing captured while a capture is in flight is refused (it could return more than is captured)", () => {
    const l = accept(approvedPreauth(), "capture", 1, 3000n)
    expect(returnOpFor(l)).toBe("release")
    expect(refusal(l, "release")).toBe("return-capture-in-flight")
    const captured = commit(l, 1)
    expect(returnOpFor(captured)).toBe("refund")
    expect(refusal(captured, "refund", 3001n)).toBe("return-exceeds-charged")
  })

  it("a refund never counts an in-flight capture as captured", () => {
    let l = commit(accept(approvedPreauth(), "capture", 1, 3000n), 1)
    l = accept(l, "capture", 2, 2000n)
    expect(refusal(l, "refund", 3001n)).toBe("return-exceeds-charged")
    expect(refusal(l, "refund", 3000n)).toBe("accepted")
  })

  it("payout-check moves no money; payout-pay needs an approved check and pays once", () => {
    const checked = commit(accept(openLedger("payout"), "payout-check", 0, 0n), 0)
    expect(totalsOf(checked)).toMatchObject({ paidOut: 0n, inFlight: 0n })
    const paying = accept(checked, "payout-pay", 1, 2500n)
    expect(refusal(paying, "payout-pay", 2500n)).toBe("payout-already-paid")
    expect(totalsOf(commit(paying, 1))).toMatchObject({ paidOut: 2500n })
    const declined = release(accept(openLedger("payout"), "payout-check", 0, 0n), 0)
    expect(refusal(declined, "payout-pay", 2500n)).toBe("payout-check-declined")
    expect(refusal(commit(accept(openLedger("payout"), "payout", 0, 100n), 0), "payout-pay", 100n)).toBe("payout-not-checked")
  })

  it("a chargeback debits captured money after settlement only", () => {
    expect(refusal(approvedSale(), "chargeback")).toBe("chargeback-not-allowed")
    const settled = settle(approvedSale(1000n))
    expect(refusal(settled, "void")).toBe("void-not-allowed")
    const charged = commit(accept(settled, "chargeback", 1, 1000n), 1)
    expect(totalsOf(charged)).toMatchObject({ chargedBack: 1000n })
    expect(refusal(charged, "refund")).toBe("return-exceeds-charged")
  })

  it("operations that do not fit the order's kind are refused with the operation's own code", () => {
    expect(refusal(approvedSale(), "capture")).toBe("capture-not-allowed")
    expect(refusal(commit(accept(openLedger("transfer"), "sale", 0, 5n), 0), "void")).toBe("void-not-allowed")
    expect(refusal(approvedSale(), "payout-pay", 5n)).toBe("payout-not-checked")
  })
})

describe("ledger: invariants", () => {
  it("name what a hand-broken ledger breaks", () => {
    const broken: Ledger = {
      kind: "preauth",
      settled: false,
      entries: [
        { tx: 0, op: "preauth", amount: 100n, moves: { authorized: 100n }, state: "committed" },
        { tx: 1, op: "capture", amount: 80n, moves: { captured: 80n }, state: "committed" },
        { tx: 2, op: "release", amount: 50n, moves: { holdReleased: 50n }, state: "in-flight" },
        { tx: 3, op: "refund", amount: 90n, moves: { returned: 90n }, state: "committed" },
        { tx: 4, op: "void", amount: 0n, moves: {}, state: "in-flight" }
      ]
    }
    const names = checkInvariants(broken).map((v) => v.invariant)
    expect(names).toEqual(expect.arrayContaining(["captures-and-releases-within-authorized", "refunds-within-captured", "void-alone"]))
  })

  it("count money in flight in every sum: one entry still processing breaks a limit, one less does not", () => {
    type Entry = Ledger["entries"][number]
    const e = (tx: number, op: LedgerOp, moves: Entry["moves"], state: Entry["state"] = "committed"): Entry => {
      const amount = Object.values(moves).reduce((a, b) => (a! > b! ? a : b), 0n)!
      return { tx, op, amount, moves, state }
    }
    const names = (kind: LedgerKind, settled: boolean, ...entries: Entry[]) => checkInvariants({ kind, settled, entries }).map((v) => v.invariant).sort()
    const preauth = e(0, "preauth", { authorized: 100n })
    const captured = e(1, "capture", { captured: 60n })
    expect(names("preauth", false, preauth, captured, e(2, "capture", { captured: 41n }, "in-flight"))).toEqual(["captures-and-releases-within-authorized", "captures-within-authorized"])
    expect(names("preauth", false, preauth, captured, e(2, "capture", { captured: 40n }, "in-flight"))).toEqual([])
    expect(names("preauth", false, preauth, captured, e(2, "release", { holdReleased: 41n }, "in-flight"))).toEqual(["captures-and-releases-within-authorized"])
    expect(names("preauth", false, preauth, captured, e(2, "release", { holdReleased: 40n }, "in-flight"))).toEqual([])
    const sale = e(0, "sale", { authorized: 100n, captured: 100n })
    const refunded = e(1, "refund", { returned: 60n })
    for (const [op, bucket] of [["refund", "returned"], ["chargeback", "chargedBack"], ["void", "voided"]] as const) {
      expect([op, names("sale", true, sale, refunded, e(2, op, { [bucket]: 41n }, "in-flight"))]).toEqual([op, ["refunds-within-captured"]])
      expect([op, names("sale", true, sale, refunded, e(2, op, { [bucket]: 40n }, "in-flight"))]).toEqual([op, []])
    }
  })

  const kinds: LedgerKind[] = ["sale", "rebill", "preauth", "transfer", "payout", "none"]
  const ops = Object.keys(RULES) as LedgerOp[]
  const step = fc.oneof(
    fc.record({ do: fc.constant("reserve" as const), op: fc.constantFrom(...ops), amount: fc.option(fc.bigInt({ min: 0n, max: 12000n }), { nil: undefined }) }),
    fc.record({ do: fc.constantFrom("commit" as const, "release" as const), pick: fc.nat() }),
    fc.record({ do: fc.constant("settle" as const) })
  )

  it("hold after every step of any sequence the rules accept (in-flight amounts included)", () => {
    fc.assert(
      fc.property(fc.constantFrom(...kinds), fc.array(step, { maxLength: 40 }), (kind, steps) => {
        let l = openLedger(kind)
        for (const s of steps) {
          if (s.do === "reserve") {
            const r = reserve(l, s.op, l.entries.length, s.amount)
            if (r.ok) l = r.ledger
          } else if (s.do === "settle") {
            l = settle(l)
          } else {
            const flying = l.entries.filter((e) => e.state === "in-flight")
            if (flying.length === 0) continue
            const tx = flying[s.pick % flying.length]!.tx
            l = s.do === "commit" ? commit(l, tx) : release(l, tx)
          }
          expect(checkInvariants(l)).toEqual([])
        }
      }),
      { numRuns: 2000 }
    )
  })
})
