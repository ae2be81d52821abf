/**
 * Small fleets, for real: worker processes on a PostgreSQL server from Debian's package (started
 * here, stopped at the end; the run creates and drops its own database on it), the simulator as a
 * process, SIGKILLs and the default faults. One clean run with kills, and one deliberately broken
 * fleet (callback claims in each worker's memory instead of the shared store) whose duplicate
 * fulfilments the audit must count, among them re-runs under a killed run's live lease.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../scripts/postgres/server"
import { NO_FAULTS } from "../src/faults"
import { fleetClean, fleetLine, runFleet } from "../src/run"

let server: PostgresServer | undefined
beforeAll(async () => {
  server = await startPostgres({ maxConnections: 80 })
}, 120_000)
afterAll(async () => {
  await server?.stop()
}, 60_000)

describe("pnpm fleet", () => {
  it("100 payments on 2 workers with 6 kills and the default faults: no double charge, no lost outcome, no duplicate fulfilment, no stuck intent", async () => {
    const r = await runFleet({ payments: 100, workers: 2, seed: 7, kills: 6, databaseUrl: server!.url })
    expect(fleetLine(r)).toMatch(/^fleet: payments 100, workers 2, kills 6, double charges 0, lost outcomes 0, duplicate fulfilments 0, stuck intents 0, conflicts replayed \d+, unknown left \d+$/)
    expect(fleetClean(r)).toBe(true)
    expect(r.reRunsUnderLease).toBe(0)
    // The kills and the faults did what they are for: work was left unfinished and taken up again,
    // the database stalled, restarted workers replayed keys.
    expect(r.intentsTakenUpAgain + r.reRunsAfterCrash).toBeGreaterThan(0)
    expect(r.callbackRuns).toBeGreaterThanOrEqual(100)
    expect(r.dbStalls.made).toBe(r.dbStalls.planned)
    expect(r.dbStalls.made).toBeGreaterThan(0)
    expect(r.replays.replays).toBeGreaterThan(0)
  }, 900_000)

  it("counts duplicate fulfilments when each worker dedupes callbacks only in its own memory, re-runs under a dead run's live lease among them", async () => {
    const r = await runFleet({ payments: 60, workers: 2, seed: 11, kills: 8, claims: "memory", databaseUrl: server!.url, faults: NO_FAULTS })
    expect(r.proxy.duplicated + r.proxy.replayed).toBeGreaterThan(0)
    expect(r.duplicateFulfilments).toBeGreaterThan(0)
    // A worker killed mid-handler takes its claim (in its memory) with it; the redelivery a moment
    // later runs on the other worker while the dead run's lease had most of its 20 s left. With a
    // shared store that claim would have waited for the lease; counted as a re-run after a crash
    // (the audit before the leases were recorded), it would have passed as harmless.
    expect(r.reRunsUnderLease).toBeGreaterThan(0)
    expect(fleetClean(r)).toBe(false)
    // The money itself was fine: only the exactly-once of the callbacks was broken.
    expect(r.doubleCharges).toBe(0)
  }, 900_000)
})
