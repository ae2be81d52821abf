/**
 * The adapter suite against a real PostgreSQL server (Debian's `postgresql` package, started here
 * in a temporary directory and stopped at the end). If the server cannot start, `beforeAll` throws
 * and every test of this file fails with the reason: never a silent skip.
 */
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { createOAuthVerifier, signOAuth } from "@paykit/signing"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startPostgres } from "../../../../scripts/postgres/server"
import { serverForFile } from "../support/postgres-server"
import { endPool } from "../../src/store/sql/end-pool"
import { openPostgresStore, postgresStoreLayer, postgresStoreLayerConfig } from "../../src/store/postgres"
import { storeNonceStore } from "../../src/store/nonces"
import { PayStore } from "../../src/store/service"
import type { IntentInput } from "../../src/store/types"
import { leakyResult, ManualClock, saleRequest, secrets } from "./support"
import { storeSuite } from "./suite"

const TABLES = ["paykit_intents", "paykit_callbacks", "paykit_nonces", "paykit_order_leases"]

// One server for the whole file, started before the suite's own beforeAll asks for it.
const requireServer = serverForFile()

storeSuite("postgres", async () => {
  const { url } = await requireServer()
  const admin = new pg.Pool({ connectionString: url, max: 2 })
  // Two stores with two pools: two fleet members racing through separate connections.
  const store = await openPostgresStore({ connectionString: Redacted.make(url), poolMax: 8, instanceId: "pg-a" })
  const peer = await openPostgresStore({ connectionString: Redacted.make(url), poolMax: 8, instanceId: "pg-b" })
  return {
    store: () => store,
    peer: () => peer,
    reset: async () => void (await admin.query(`TRUNCATE ${TABLES.join(", ")}`)),
    dump: async () => {
      const parts: Array<string> = []
      for (const t of TABLES) parts.push(...(await admin.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM ${t} t`)).rows.map((r) => r.j))
      return parts.join("\n")
    },
    reopen: () => openPostgresStore({ connectionString: Redacted.make(url), poolMax: 2, instanceId: "pg-c" }),
    close: async () => {
      await store.close()
      await peer.close()
      await endPool(admin)
    }
  }
})

function filesUnder(dir: string): Array<string> {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe("postgres adapter: the server's own guarantees", () => {
  let url: string
  let admin: pg.Pool
  beforeAll(async () => {
    url = (await requireServer()).url
    admin = new pg.Pool({ connectionString: url, max: 3 })
  }, 120_000)
  afterAll(async () => {
    if (admin !== undefined) await endPool(admin)
  })

  /**
   * Resolves once a session of this database waits on a lock (pg_stat_activity's wait_event_type
   * "Lock", docs: PostgreSQL's monitoring-stats), looking again as each look returns, until
   * `stopped()`; then it never resolves.
   */
  async function lockWait(pool: pg.Pool, stopped: () => boolean): Promise<void> {
    while (!stopped()) {
      const rows = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
      if ((rows.rows[0]?.n ?? 0) > 0) return
    }
    return new Promise(() => undefined)
  }

  it("skips rows another transaction holds instead of waiting for them (FOR UPDATE SKIP LOCKED)", async () => {
    const store = await openPostgresStore({ connectionString: Redacted.make(url), instanceId: "skip" })
    const holder = await admin.connect()
    try {
      await admin.query("TRUNCATE paykit_intents")
      for (let i = 0; i < 10; i++) {
        await Effect.runPromise(store.recordIntent({ idempotencyKey: `s${i}`, operation: "SALE", client_orderid: `o${i}`, endpoint: "1001" }, { leaseMs: 1 }))
      }
      await holder.query("BEGIN")
      await holder.query("SELECT 1 FROM paykit_intents WHERE idempotency_key IN ('s0', 's1', 's2') FOR UPDATE")
      // The 1 ms leases are over on a clock 5 s ahead (no real wait for them to run out).
      const claim = Effect.runPromise(Effect.withClock(store.unfinished({ leaseMs: 60_000, limit: 100 }), new ManualClock(Date.now() + 5_000)))
      // Without SKIP LOCKED the claim would wait on the held rows until the holder ends: the server
      // shows such a wait in pg_stat_activity, so the race is against that, not against a timer.
      let settled = false
      const outcome = await Promise.race([claim.then((rows) => rows), lockWait(admin, () => settled).then(() => "blocked" as const)]).finally(() => (settled = true))
      if (outcome === "blocked") throw new Error("unfinished() waited on rows another transaction holds")
      expect(outcome.map((i) => i.idempotencyKey).sort()).toEqual(["s3", "s4", "s5", "s6", "s7", "s8", "s9"])
      await holder.query("ROLLBACK")
      expect((await Effect.runPromise(store.unfinished({ leaseMs: 60_000 }))).map((i) => i.idempotencyKey)).toEqual(["s0", "s1", "s2"])
    } finally {
      await holder.query("ROLLBACK").catch(() => undefined)
      holder.release()
      await store.close()
    }
  }, 60_000)

  it("applies migrations once when many instances start together on a fresh database", async () => {
    await admin.query("DROP DATABASE IF EXISTS paykit_fresh")
    await admin.query("CREATE DATABASE paykit_fresh")
    const freshUrl = url.replace(/\/postgres$/, "/paykit_fresh")
    const stores = await Promise.all(Array.from({ length: 5 }, (_, i) => openPostgresStore({ connectionString: Redacted.make(freshUrl), poolMax: 2, instanceId: `boot${i}` })))
    const fresh = new pg.Pool({ connectionString: freshUrl, max: 1 })
    try {
      const rows = (await fresh.query<{ version: number; n: string }>("SELECT version, count(*) AS n FROM paykit_migrations GROUP BY version ORDER BY version")).rows
      expect(rows).toEqual([{ version: 1, n: "1" }, { version: 2, n: "1" }, { version: 3, n: "1" }])
      const reports = await Promise.all(stores.map((s) => Effect.runPromise(s.migrate)))
      expect(reports.flat().every((m) => !m.applied)).toBe(true)
    } finally {
      await Promise.all(stores.map((s) => s.close()))
      await endPool(fresh)
      await admin.query("DROP DATABASE paykit_fresh")
    }
  }, 60_000)

  it("reads the URL through Config as Redacted (PAYKIT_DATABASE_URL) and builds a working layer", async () => {
    const provider = ConfigProvider.fromMap(new Map([["PAYKIT_DATABASE_URL", url], ["PAYKIT_DATABASE_POOL_MAX", "2"]]))
    const program = Effect.flatMap(PayStore, (store) => store.claimCallback("config=1", { leaseMs: 1000 }))
    const claim = await Effect.runPromise(
      Effect.provide(program, postgresStoreLayerConfig({ instanceId: "cfg" })).pipe(Effect.withConfigProvider(provider))
    )
    expect(claim._tag).toMatch(/Claimed|Done|RunningElsewhere/)
    const missing = await Effect.runPromiseExit(
      Effect.provide(program, postgresStoreLayerConfig()).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
    )
    expect(missing._tag).toBe("Failure")
    expect(JSON.stringify(missing)).toContain("PAYKIT_DATABASE_URL")
  }, 60_000)

  it("fails with StoreError naming no password when the server refuses the credentials or is not there", async () => {
    const wrong = url.replace(/:\/\/postgres:[^@]+@/, "://postgres:wrong-password-123@")
    const refused = await Effect.runPromiseExit(Effect.provide(PayStore, Layer.fresh(postgresStoreLayer({ connectionString: Redacted.make(wrong) }))))
    expect(refused._tag).toBe("Failure")
    const text = JSON.stringify(refused)
    expect(text).toContain("StoreError")
    expect(text).toContain("28P01")
    expect(text).not.toContain("wrong-password-123")
    const gone = await openPostgresStore({ connectionString: "postgres://u:pw-secret-9@127.0.0.1:1/x", connectionTimeoutMs: 2000 }).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(gone).toMatchObject({ _tag: "StoreError", adapter: "postgres" })
    expect(String((gone as Error).message)).not.toContain("pw-secret-9")
  }, 60_000)

  it("shares OAuth replay protection between two instances' verifiers (storeNonceStore)", async () => {
    const a = await openPostgresStore({ connectionString: Redacted.make(url), instanceId: "verifier-a" })
    const b = await openPostgresStore({ connectionString: Redacted.make(url), instanceId: "verifier-b" })
    try {
      const lookupConsumer = (key: string) => (key === "merchant" ? { consumerSecret: "control-key" } : undefined)
      const verifierA = createOAuthVerifier({ lookupConsumer, nonceStore: storeNonceStore(a) })
      const verifierB = createOAuthVerifier({ lookupConsumer, nonceStore: storeNonceStore(b) })
      const request = { url: "https://shop.example/api/v2/payout/1001", params: { client_orderid: "p-1", amount: "5.00" } }
      const signed = signOAuth({ ...request, consumerKey: "merchant", signatureMethod: "HMAC-SHA1", consumerSecret: "control-key" })
      const first = await verifierA.verify({ ...request, authorizationHeader: signed.authorizationHeader })
      expect(first.ok).toBe(true)
      const replay = await verifierB.verify({ ...request, authorizationHeader: signed.authorizationHeader })
      expect(replay).toMatchObject({ ok: false, reason: "replayed-nonce" })
    } finally {
      await a.close()
      await b.close()
    }
  }, 60_000)

  it("writes no card data or control digest anywhere in the server's data directory (tables and WAL)", async () => {
    const store = await openPostgresStore({ connectionString: Redacted.make(url), instanceId: "wal" })
    try {
      await Effect.runPromise(store.recordIntent(saleRequest("wal-1") as IntentInput, { leaseMs: 1000 }))
      await Effect.runPromise(store.recordOutcome("wal-1", { _tag: "Failed", errorTag: "DecodeError", data: leakyResult() }))
      await admin.query("CHECKPOINT")
    } finally {
      await store.close()
    }
    const files = filesUnder((await requireServer()).dataDir)
    let scanned = 0
    for (const file of files) {
      const bytes = readFileSync(file).toString("latin1")
      scanned += bytes.length
      for (const pan of secrets.pans) expect(bytes.includes(pan), `${pan} in ${file}`).toBe(false)
      expect(bytes.includes(secrets.control), `control digest in ${file}`).toBe(false)
    }
    // The row itself did reach the disk, so the search above looked where it would have been.
    expect(files.some((f) => readFileSync(f).toString("latin1").includes("order-wal-1"))).toBe(true)
    expect(scanned).toBeGreaterThan(1_000_000)
  }, 60_000)
})

describe("postgres test server", () => {
  it("started PostgreSQL from Debian's package (when it cannot, this test fails with the reason)", async () => {
    const s = await requireServer()
    expect(s.version).toMatch(/^\d+$/)
    expect(s.url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/postgres$/)
  }, 120_000)

  it("fails with the reason and how to install the server when the binaries are missing", async () => {
    await expect(startPostgres({ binDir: "/nonexistent/bin" })).rejects.toThrow(/no pg_ctl in \/nonexistent\/bin: install Debian.s postgresql package/)
  })
})
