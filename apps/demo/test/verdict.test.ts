/**
 * The tour's verdict counts a skipped flow apart from the flows that ran (issue 29): against
 * another gateway, the flows that need the embedded simulator are listed as skipped, each with its
 * reason, and never counted as ended as expected. The whole tour against a separate simulator
 * over HTTP is in `verdict.heavy.test.ts`.
 */
import { expect, it } from "vitest"
import { verdict, type FlowResult } from "../src/report"
import { flows } from "../src/tour"

const row = (flow: string, ok: boolean, skipped?: string): FlowResult => ({
  flow, orderid: "-", finalStatus: skipped === undefined ? "approved" : "skipped", expected: "approved", ms: 1, ok, ...(skipped === undefined ? {} : { skipped })
})

it("counts skipped flows apart, each with its reason; failures name the flows that ran", () => {
  const ran = Array.from({ length: 10 }, (_, i) => row(`flow ${i}`, true))
  const skipped = Array.from({ length: 9 }, (_, i) => row(`skipped ${i}`, true, `reason ${i}`))
  expect(verdict([...ran, ...skipped], 5)).toBe(`10 ran as expected, 9 skipped: ${skipped.map((r, i) => `skipped ${i} (reason ${i})`).join("; ")}.`)
  expect(verdict(ran, 5)).toBe("All 10 flows ended as expected in 5 ms.")
  expect(verdict([row("a", false), row("b", true), row("c", true, "why")], 5)).toBe("1 of 2 flows that ran did not end as expected: a, 1 skipped: c (why).")
})

it("every flow that needs the simulator says why", () => {
  for (const flow of flows) if (flow.simulatorOnly !== undefined) expect(flow.simulatorOnly.length, flow.name).toBeGreaterThan(10)
})
