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
}, 60_000)
