/**
 * The protocol model (protocol-model.ts) on a real PostgreSQL 15 (Debian's `postgresql` package,
 * started here in a temporary directory and stopped at the end; `PAYKIT_DATABASE_URL` points it at
 * an existing server instead). `PAYKIT_MODEL_POSTGRES_RUNS` sequences (default 300); each instance
 * opens its own store handle under its own `instanceId` on one pool, as a fleet's members do.
 * `node scripts/model.mjs --store postgres` runs 100,000.
 *
 * If the server cannot start, the test fails with the reason: never a silent skip.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres, type PostgresServer } from "../../../../scripts/postgres/server"
import { runModel } from "./run-model"
import { postgresModelStore, type ModelStore } from "./stores"

const runs = Number(process.env["PAYKIT_MODEL_POSTGRES_RUNS"] ?? 300)

describe("the money-call protocol model on PostgreSQL", () => {
  let server: PostgresServer | undefined
  let store: ModelStore | undefined

  beforeAll(async () => {
    const given = process.env["PAYKIT_DATABASE_URL"]
    if (given === undefined || given === "") server = await startPostgres()
    store = await postgresModelStore(given !== undefined && given !== "" ? given : server!.url)
  }, 180_000)

  afterAll(async () => {
    await store?.close()
    await server?.stop()
  }, 60_000)

  it(`${runs} sequences keep every invariant`, async () => {
    const { sequences } = await runModel(store!, runs, 15)
    expect(sequences).toBe(runs)
  }, 1_800_000)
})
