/**
 * One store at a time, for profiling (`node --cpu-prof`) and for quick A/B runs: sales through the
 * Promise client against the in-process simulator, 16 in flight, alternating rounds of "none" and
 * the named store so both see the same machine load.
 *
 *   node --conditions=@paykit/source --import tsx bench/store/one-store.ts memory|pglite|postgres [rounds] [--only]
 *
 * `--only` skips the "none" rounds (a profile of the store-backed client alone).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { openMemoryStore, type PayStoreHandle } from "@paykit/client"
import { openPgliteStore } from "@paykit/client/store/pglite"
import { openPostgresStore } from "@paykit/client/store/postgres"
import { requests } from "@paykit/testkit"
import { client, sim } from "./sim-client"
import { startPostgres, type PostgresServer } from "../../scripts/postgres/server"

const which = process.argv[2] ?? "memory"
const rounds = Number(process.argv[3] ?? "5")
const only = process.argv.includes("--only")
const PER_ROUND = 1600
const IN_FLIGHT = 16

let cpuPerSale = 0
async function round(pay: ReturnType<typeof client>): Promise<number> {
  let next = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
    while (next++ < PER_ROUND) await pay.sale(requests.sale())
  }))
  const perSecond = PER_ROUND / ((performance.now() - started) / 1000)
  const used = process.cpuUsage(cpu)
  cpuPerSale = (used.user + used.system) / PER_ROUND
  await sim.reset()
  return perSecond
}

const dir = mkdtempSync(join(tmpdir(), "paykit-one-store-"))
let server: PostgresServer | undefined
try {
  if (which === "postgres") server = await startPostgres()
  const store = which === "memory"
    ? await openMemoryStore()
    : which === "pglite"
    ? await openPgliteStore({ dataDir: dir })
    : await openPostgresStore({ connectionString: server!.url })
  const none = client(undefined)
  const with_ = client(store)
  await round(none)
  await round(with_)
  const ratios: number[] = []
  for (let i = 0; i < rounds; i++) {
    const base = only ? Number.NaN : await round(none)
    const baseCpu = cpuPerSale
    const s = await round(with_)
    ratios.push(s / base)
    // CPU µs per sale (this process only: PostgreSQL's own work is not in it).
    console.log(`round ${i + 1}: none ${Math.round(base)}/s (${baseCpu.toFixed(0)} µs CPU), ${which} ${Math.round(s)}/s (${cpuPerSale.toFixed(0)} µs CPU), ratio ${(s / base).toFixed(3)}`)
  }
  ratios.sort((a, b) => a - b)
  if (!only) console.log(`median ratio ${ratios[Math.floor(ratios.length / 2)]!.toFixed(3)}`)
  await store.close()
} finally {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
  await sim.close()
}
