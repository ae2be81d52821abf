/**
 * The tour against a separate simulator over HTTP, as `PAYKIT_BASE_URL` points it at another
 * gateway (issue 29): the flows that need the embedded simulator are skipped, each with its reason,
 * and the verdict counts them apart from the flows that ran. Heavy: real sockets, and the client's
 * own status polling on a real clock.
 */
import { afterEach, expect, it, vi } from "vitest"
import { createSimulator, testMerchant } from "@paykit/testkit"
import { runTour } from "../src/run-tour"
import { flows } from "../src/tour"

const ENV = ["PAYKIT_BASE_URL", "PAYKIT_LOGIN", "PAYKIT_CONTROL_KEY", "PAYKIT_ENDPOINT_ID", "PAYKIT_ENDPOINT_GROUP_ID", "PAYKIT_PRIVATE_KEY", "PAYKIT_CALLBACK_URL"] as const
const saved = Object.fromEntries(ENV.map((n) => [n, process.env[n]]))
afterEach(() => {
  for (const n of ENV) {
    if (saved[n] === undefined) delete process.env[n]
    else process.env[n] = saved[n]
  }
})

it("against a separate simulator over HTTP, the skipped flows are not counted as ran", async () => {
  const sim = createSimulator({ processingDelayMs: 20, clock: "real" })
  const server = await sim.listen()
  const lines: Array<string> = []
  const log = vi.spyOn(console, "log").mockImplementation((...args: Array<unknown>) => void lines.push(args.join(" ")))
  try {
    Object.assign(process.env, {
      PAYKIT_BASE_URL: server.url,
      PAYKIT_LOGIN: testMerchant.login,
      PAYKIT_CONTROL_KEY: testMerchant.controlKey,
      PAYKIT_ENDPOINT_ID: String(testMerchant.endpointId),
      PAYKIT_ENDPOINT_GROUP_ID: String(testMerchant.endpointGroupId),
      PAYKIT_PRIVATE_KEY: testMerchant.privateKeyPem
    })
    delete process.env.PAYKIT_CALLBACK_URL
    expect(await runTour()).toBe(true)
  } finally {
    log.mockRestore()
    await server.close()
    await sim.close()
  }
  const out = lines.join("\n")
  const simulatorOnly = flows.filter((f) => f.simulatorOnly !== undefined)
  const ran = flows.length - simulatorOnly.length
  expect(out).not.toMatch(/All \d+ flows ended as expected/)
  const last = lines[lines.length - 1]!
  expect(last).toMatch(new RegExp(`^${ran} ran as expected, ${simulatorOnly.length + 1} skipped: `))
  for (const flow of simulatorOnly) expect(last).toContain(`${flow.name} (${flow.simulatorOnly})`)
  expect(last).toContain("callbacks received and verified (set PAYKIT_CALLBACK_URL to a public URL of yours)")
}, 240_000)
