import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { main as effectMain } from "../examples/effect-sale"
import { main as promiseMain } from "../examples/promise-sale"
import { BASE_URL, setup } from "./support/sim"
import { startTestTime, useTestTime } from "./support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// The README's examples are these files; running them here keeps the README from rotting.
describe("README examples run against the simulator", () => {
  const { sim } = setup()
  afterAll(() => sim.close())

  it("Promise facade: sale → awaitFinal → return", async () => {
    expect(await promiseMain({ baseUrl: BASE_URL, fetch: sim.fetch })).toMatchObject({ final: "approved", return: "async-response" })
  })

  it("Effect API: sale → awaitFinal → return", async () => {
    expect(await effectMain({ baseUrl: BASE_URL, fetch: sim.fetch })).toMatchObject({ final: "approved", return: "async-response" })
  })
})
