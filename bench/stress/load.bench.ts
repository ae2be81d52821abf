/**
 * Load: autocannon, 200 concurrent connections for 60 s against the simulator over loopback,
 * alternating pre-signed `status` requests and fresh signed `sale`s (each with a new client_orderid
 * and its control digest made by @paykit/signing in setupRequest). Baseline in the same run: the
 * same autocannon load against a bare node:http server answering a fixed JSON body. Reports
 * requests/s, p50/p99 latency, errors, and the server process's RSS and heap before and after.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/stress/load.bench.ts
 * PAYKIT_BENCH_QUICK=1 → 10 s per target. Servers run in child processes (with --expose-gc, so the
 * memory figures are after a full GC).
 */
import { fork, type ChildProcess } from "node:child_process"
import { cpus } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import autocannon from "autocannon"
import { signControl } from "@paykit/signing"
import { requests, testMerchant } from "@paykit/testkit"

const here = dirname(fileURLToPath(import.meta.url))
const quick = process.env["PAYKIT_BENCH_QUICK"] === "1"
const DURATION_S = Number(process.env["PAYKIT_LOAD_SECONDS"] ?? (quick ? 10 : 60))
const CONNECTIONS = 200
const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }
const endpointId = testMerchant.endpointId
const key = testMerchant.controlKey

interface Mem { rss: number; heapUsed: number; heapTotal: number; external: number; orders: number; gc: boolean }

function start(mode: "sim" | "bare"): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(here, "load-server.ts"), [mode], {
    execArgv: ["--conditions=@paykit/source", "--import", "tsx", "--expose-gc"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  return new Promise((resolve, reject) => {
    child.once("error", reject)
    child.on("message", (m: { url?: string }) => {
      if (m.url !== undefined) resolve({ child, url: m.url })
    })
  })
}

function memOf(child: ChildProcess): Promise<Mem> {
  return new Promise((resolve) => {
    const on = (m: { mem?: Mem }) => {
      if (m.mem === undefined) return
      child.off("message", on)
      resolve(m.mem)
    }
    child.on("message", on)
    child.send({ mem: true })
  })
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once("exit", () => resolve())
    child.send({ close: true })
    setTimeout(() => child.kill(), 5_000).unref()
  })
}

const saleBody = () => {
  const fields = requests.sale()
  return new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key, endpointId }) }).toString()
}

async function run(url: string, statusBody: string): Promise<autocannon.Result> {
  return autocannon({
    url,
    connections: CONNECTIONS,
    duration: DURATION_S,
    requests: [
      { method: "POST", path: `/api/v2/status/${endpointId}`, headers, body: statusBody },
      {
        method: "POST",
        path: `/api/v2/sale/${endpointId}`,
        headers,
        // A fresh client_orderid and control per request: every sale is a new order.
        setupRequest: (req) => ({ ...req, body: saleBody() })
      }
    ]
  })
}

const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`

async function measure(mode: "sim" | "bare") {
  const { child, url } = await start(mode)
  // One real order to ask the status of (pre-signed once).
  const sale = requests.sale()
  const first = await fetch(`${url}/api/v2/sale/${endpointId}`, { method: "POST", headers, body: new URLSearchParams({ ...sale, control: signControl("SALE", sale, { key, endpointId }) }) })
  const orderid = String(((await first.json()) as Record<string, unknown>)["paynet-order-id"] ?? "1000001")
  const statusFields = { login: testMerchant.login, client_orderid: sale.client_orderid, orderid }
  const statusBody = new URLSearchParams({ ...statusFields, control: signControl("STATUS", statusFields, { key, endpointId }) }).toString()
  const before = await memOf(child)
  const result = await run(url, statusBody)
  const after = await memOf(child)
  await stop(child)
  const errors = result.errors + result.timeouts + result.non2xx
  const figures = {
    rps: Math.round(result.requests.average),
    p50ms: result.latency.p50,
    p99ms: result.latency.p99,
    requests: result.requests.total,
    errors,
    non2xx: result.non2xx,
    before,
    after
  }
  console.log(`${mode === "sim" ? "simulator " : "bare http "} ${String(figures.rps).padStart(6)} req/s  p50 ${figures.p50ms} ms  p99 ${figures.p99ms} ms  errors ${errors}  RSS ${mb(before.rss)} → ${mb(after.rss)}  heap ${mb(before.heapUsed)} → ${mb(after.heapUsed)}${mode === "sim" ? `  (${after.orders} orders stored)` : ""}`)
  return figures
}

console.log(`load: autocannon ${CONNECTIONS} connections × ${DURATION_S} s, status + fresh signed sale alternating; Node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? "?"})`)
const sim = await measure("sim")
const bare = await measure("bare")
const ratio = Number((sim.rps / bare.rps).toFixed(3))
// Issue #14's goal: the simulator's throughput under autocannon at least 0.70 of a bare node:http
// server's in the same run, with no errors (a fast simulator that drops requests meets nothing).
const GOAL = 0.7
console.log(`simulator / bare node:http throughput: ${ratio.toFixed(3)} (goal >= ${GOAL}) ${ratio >= GOAL && sim.errors === 0 ? "MET" : "NOT MET"}`)
if (sim.errors > 0) console.log(`ERRORS: ${sim.errors} (${sim.non2xx} non-2xx)`)
const goals = {
  [`simulator vs bare node:http under autocannon (${CONNECTIONS} connections)`]: { goal: GOAL, ratio, met: ratio >= GOAL && sim.errors === 0, errors: sim.errors }
}
console.log(JSON.stringify({ bench: "stress/load", connections: CONNECTIONS, durationS: DURATION_S, simulator: sim, bare, ratio, goals }))
process.exit(sim.errors === 0 ? 0 : 1)
