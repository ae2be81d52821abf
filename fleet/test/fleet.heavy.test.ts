/**
 * Small fleets, for real: worker processes on a PostgreSQL server from Debian's package (started
 * here, stopped at the end; the run creates and drops its own database on it), the simulator as a
 * process, SIGKILLs and the default faults. One clean run with kills, and one deliberately broken
 * fleet (callback claims in each worker's memory instead of the shared store) whose duplicate
 * fulfilments the audit must count, among them runs under another run's live lease.
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
    // The kills and the faults did what they are for: work was left unfinished and taken up again,
    // the database stalled, restarted workers replayed keys.
    expect(r.intentsTakenUpAgain + r.reRunsAfterCrash).toBeGreaterThan(0)
    expect(r.callbackRuns).toBeGreaterThanOrEqual(100)
    expect(r.dbStalls.made).toBe(r.dbStalls.planned)
    expect(r.dbStalls.made).toBeGreaterThan(0)
    expect(r.replays.replays).toBeGreaterThan(0)
  }, 900_000)

  it("counts duplicate fulfilments when each worker dedupes callbacks only in its own memory, runs under a live lease among them", async () => {
    const r = await runFleet({ payments: 40, workers: 2, seed: 11, kills: 0, claims: "memory", databaseUrl: server!.url, faults: NO_FAULTS })
    expect(r.proxy.duplicated + r.proxy.replayed).toBeGreaterThan(0)
    expect(r.duplicateFulfilments).toBeGreaterThan(0)
    // Without kills, no run died: every re-run is a second live run of the effect. The proxy sends
    // one callback in ten to two workers at once; each claims it in its own memory and both run it.
    expect(r.reRunsUnderLease).toBeGreaterThan(0)
    expect(r.reRunsAfterCrash).toBe(0)
    expect(fleetClean(r)).toBe(false)
    // The money itself was fine: only the exactly-once of the callbacks was broken.
    expect(r.doubleCharges).toBe(0)
  }, 900_000)
})
