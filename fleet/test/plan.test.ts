import { describe, expect, it } from "vitest"
import { planBackOffice, planPayments, planStalls } from "../src/plan"

const minor = (amount: string) => {
  const [whole, fraction = ""] = amount.split(".")
  return Number(whole) * 100 + Number(fraction.padEnd(2, "0"))
}

describe("the fleet's plan", () => {
  it("spreads the database stalls over the run, each within its range, the same for the same seed", () => {
    const stalls = planStalls(12, 1000, 4, [500, 2_500], 7)
    expect(stalls).toHaveLength(12)
    for (const s of stalls) {
      expect(s.durationMs).toBeGreaterThanOrEqual(500)
      expect(s.durationMs).toBeLessThanOrEqual(2_500)
      expect(s.worker).toBeLessThan(4)
      expect(s.afterPayments).toBeLessThan(900)
    }
    expect(stalls.map((s) => s.afterPayments)).toEqual([...stalls.map((s) => s.afterPayments)].sort((a, b) => a - b))
    expect(planStalls(12, 1000, 4, [500, 2_500], 7)).toEqual(stalls)
    expect(planStalls(12, 1000, 4, [500, 2_500], 8)).not.toEqual(stalls)
    expect(planStalls(0, 1000, 4, [500, 2_500], 7)).toEqual([])
  })

  it("gives back-office captures only to approved-card preauths, never the merchant's amount, and never more than the preauth leaves beside it", () => {
    const plan = planPayments(2_000, 3)
    const office = planBackOffice(plan, 0.5, 3)
    const byId = new Map(plan.map((p) => [p.clientOrderId, p]))
    const eligible = plan.filter((p) => p.flow === "preauth-capture" && p.card === "approve").length
    expect(office.length).toBeGreaterThan(eligible * 0.35)
    expect(office.length).toBeLessThan(eligible * 0.65)
    for (const b of office) {
      const p = byId.get(b.clientOrderId)!
      expect(p).toMatchObject({ flow: "preauth-capture", card: "approve" })
      expect(b.amount).toMatch(/^\d+\.\d{2}$/)
      expect(minor(b.amount)).toBeGreaterThan(0)
      expect(b.amount).not.toBe(p.followAmount)
      expect(minor(b.amount) + minor(p.followAmount!)).toBeLessThanOrEqual(minor(p.amount))
    }
    expect(planBackOffice(plan, 0.5, 3)).toEqual(office)
    expect(planBackOffice(plan, 0, 3)).toEqual([])
  })

  it("moves a back-office amount off the merchant's, and skips a preauth with no room beside the merchant's capture", () => {
    // 0.03 held, 0.01 captured by the merchant: 0.01 or 0.02 fit beside it, and 0.01 is the merchant's.
    const tight = Array.from({ length: 50 }, (_, index) => ({
      index, flow: "preauth-capture" as const, clientOrderId: `t-${index}`, amount: "0.03", card: "approve" as const, followAmount: "0.01"
    }))
    const office = planBackOffice(tight, 1, 5)
    expect(office).toHaveLength(50)
    expect(new Set(office.map((b) => b.amount))).toEqual(new Set(["0.02"]))
    const full = tight.map((p) => ({ ...p, followAmount: "0.03" }))
    expect(planBackOffice(full, 1, 5)).toEqual([])
  })
})
