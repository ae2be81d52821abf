import { expect, it, vi } from "vitest"
import { runTour } from "../src/run-tour"

it("runs every flow of the tour against the embedded simulator, all as expected", async () => {
  const lines: Array<string> = []
  const log = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void lines.push(args.join(" ")))
  try {
    expect(await runTour()).toBe(true)
  } finally {
    log.mockRestore()
  }
  const out = lines.join("\n")
  expect(out).toMatch(/All \d+ flows ended as expected/)
  // The tour prints masked cards only.
  expect(out).not.toMatch(/4111111111111111|4000000000003220/)
  // Links of the in-process simulator are printed as what they are, never as a URL that does not resolve.
  expect(out).not.toMatch(/sent to https?:\/\//)
  expect(out).toMatch(/customer sent to the hosted page \/__sim\/form\/\d+ \(served in process by the embedded simulator, not on the network/)
  // Every order the simulator made is in a row of the table, and every column has a header.
  expect(out).toMatch(/^Every order the simulator made \(\d+\) is in the table\.$/m)
  expect(out).toMatch(/^flow\s+orderid\s+final status\s+expected\s+time\s+result$/m)
  expect(out).toMatch(/^create-card-ref → get-card-info → make-rebill\s+\d+,\d+\s/m)
  // Recurring process and update (docs/decisions.md#13-recurring-payments): the subscription's order and both charges are rows; the update shows in the amounts.
  expect(out).toMatch(/^recurring payment without a schedule: process, update, process\s+\d+,\d+,\d+\s+2 charges approved, 4\.50 then 6\.00 EUR\s/m)
  // A chargeback (docs/decisions.md#17-chargebacks) on the simulator's clock, typed by the client: the last transaction and the money outcome.
  expect(out).toMatch(/status → approved \(last transaction: chargeback\)/)
  expect(out).toMatch(/^chargeback 30 days after settlement\s+\d+\s+charged-back 25\.00 EUR\s/m)
  expect(out).not.toMatch(/4000000000001976/)
}, 60_000)
