/**
 * Small fleets, for real: worker processes on a PostgreSQL server from Debian's package (started
 * here, stopped at the end; the run creates and drops its own database on it), the simulator as a
 * process, SIGKILLs. One clean run with kills, and one deliberately broken fleet (callback claims in
 * each worker's memory instead of the shared store) whose duplicate fulfilments the audit must count.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../scripts/postgres/server"
import { fleetClean, fleetLine, runFleet } from "../src/run"

let server: PostgresServer | undefined
beforeAll(async () => {
  server = await startPostgres({ maxConnections: 80 })
}, 120_000)
afterAll(async () => {
  await server?.stop()
}, 60_000)

describe("pnpm fleet", () => {
  it("100 payments on 2 workers with 6 kills: no double charge, no lost outcome, no duplicate fulfilment, no stuck intent", async () => {
    const r = await runFleet({ payments: 100, workers: 2, seed: 7, kills: 6, databaseUrl: server!.url })
    expect(fleetLine(r)).toBe("fleet: payments 100, workers 2, kills 6, double charges 0, lost outcomes 0, duplicate fulfilments 0, stuck intents 0")
    expect(fleetClean(r)).toBe(true)
    // The kills did what they are for: work was left unfinished and taken up again.
    expect(r.intentsTakenUpAgain + r.reRunsAfterCrash).toBeGreaterThan(0)
    expect(r.callbackRuns).toBeGreaterThanOrEqual(100)
  }, 900_000)

  it("counts duplicate fulfilments when each worker dedupes callbacks only in its own memory", async () => {
    const r = await runFleet({ payments: 40, workers: 2, seed: 11, kills: 0, claims: "memory", databaseUrl: server!.url })
    expect(r.proxy.duplicated + r.proxy.replayed).toBeGreaterThan(0)
    expect(r.duplicateFulfilments).toBeGreaterThan(0)
    expect(fleetClean(r)).toBe(false)
    // The money itself was fine: only the exactly-once of the callbacks was broken.
    expect(r.doubleCharges).toBe(0)
  }, 900_000)
})
