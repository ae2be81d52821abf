import { PGlite } from "@electric-sql/pglite"
import { Effect, Layer } from "effect"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type { IntentInput } from "../../src/store/types"
import { openPgliteStore, pgliteDriver, pgliteStoreLayer } from "../../src/store/pglite"
import { makePayStore, PayStore } from "../../src/store/service"
import { sqlBackend } from "../../src/store/sql/backend"
import { leakyResult, ManualClock, saleRequest, secrets } from "./support"
import { storeSuite } from "./suite"

const TABLES = ["paykit_intents", "paykit_callbacks", "paykit_nonces", "paykit_order_leases"]

storeSuite("pglite", async () => {
  const db = await PGlite.create()
  const backend = sqlBackend(pgliteDriver(db, false))
  const store = makePayStore(backend, { instanceId: "pgl-a" })
  const peer = makePayStore(backend, { instanceId: "pgl-b" })
  await Effect.runPromise(store.migrate)
  return {
    store: () => store,
    peer: () => peer,
    reset: async () => void (await db.exec(`TRUNCATE ${TABLES.join(", ")}`)),
    dump: async () => {
      const parts: Array<string> = []
      for (const t of TABLES) parts.push(...(await db.query<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM ${t} t`)).rows.map((r) => r.j))
      return parts.join("\n")
    },
    reopen: () => openPgliteStore({ db, instanceId: "pgl-c" }),
    close: () => db.close()
  }
})

function filesUnder(dir: string): Array<string> {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

describe("pglite adapter: durable in a directory", () => {
  const dir = mkdtempSync(join(tmpdir(), "paykit-pglite-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  it("keeps intents across a close and reopen, applies migrations once, and writes no card data to any file", async () => {
    const first = await openPgliteStore({ dataDir: dir, instanceId: "one" })
    try {
      await Effect.runPromise(first.recordIntent(saleRequest("durable-1") as IntentInput, { leaseMs: 30_000 }))
      await Effect.runPromise(first.recordOutcome("durable-1", { _tag: "Returned", status: "approved", data: leakyResult() }))
      await Effect.runPromise(first.recordIntent(saleRequest("durable-2") as IntentInput, { leaseMs: 30_000 }))
    } finally {
      await first.close()
    }
    // Read inside a layer this time: the Effect way, closed with its scope.
    const program = Effect.gen(function*() {
      const store = yield* PayStore
      const migrations = yield* store.migrate
      const done = yield* store.findByKey("durable-1")
      const unfinished = yield* store.unfinished({ leaseMs: 1000, olderThanMs: 0 })
      return { migrations, done, unfinished }
    })
    const later = Date.now() + 60_000
    const { migrations, done, unfinished } = await Effect.runPromise(
      Effect.provide(program, pgliteStoreLayer({ dataDir: dir })).pipe(Effect.withClock(new ManualClock(later)))
    )
    expect(migrations.every((m) => !m.applied)).toBe(true)
    expect(done?.outcome).toMatchObject({ _tag: "Returned", status: "approved" })
    expect(unfinished.map((i) => i.idempotencyKey)).toEqual(["durable-2"])
    const files = filesUnder(dir)
    expect(files.length).toBeGreaterThan(10)
    for (const file of files) {
      const bytes = readFileSync(file).toString("latin1")
      for (const pan of secrets.pans) expect(bytes.includes(pan), `${pan} in ${file}`).toBe(false)
      expect(bytes.includes(secrets.control), `control digest in ${file}`).toBe(false)
    }
  }, 120_000)

  it("answers StoreError (not a defect) once the database is closed", async () => {
    const db = await PGlite.create()
    const store = makePayStore(sqlBackend(pgliteDriver(db, true)))
    await Effect.runPromise(store.migrate)
    await db.close()
    const error = await Effect.runPromise(Effect.flip(store.findByKey("x")))
    expect(error).toMatchObject({ _tag: "StoreError", method: "findByKey", adapter: "pglite" })
  }, 60_000)

  it("builds as a layer that fails with StoreError when the directory cannot be used", async () => {
    const file = join(dir, "not-a-dir")
    writeFileSync(file, "x")
    const exit = await Effect.runPromiseExit(Effect.provide(PayStore, Layer.fresh(pgliteStoreLayer({ dataDir: join(file, "db") }))))
    expect(exit._tag).toBe("Failure")
    expect(JSON.stringify(exit)).toContain("StoreError")
  }, 60_000)
})
