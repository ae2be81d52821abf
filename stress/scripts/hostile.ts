/**
 * Hostile traffic beside normal traffic (issue 18, item 5). Two runs against the simulator in its
 * own process (hostile-server.ts, a shared-sandbox setup), each `--seconds` long:
 *
 * - plain: normal traffic only: two good merchants, each 25 requests/s (`--rps`; signed sales with a
 *   callback to a receiver on loopback, and status queries), paced;
 * - hostile: the same normal traffic plus oversized bodies (60 MB declared with 1 MB streamed,
 *   2 MB chunked, and 60 MB bodies sent whole one after another), slow bodies and slow headers
 *   (slowloris), one merchant flooding signed status queries as fast as 48 connections allow, and
 *   sales whose callbacks name metadata, link-local and private addresses.
 *
 * Reported: normal traffic's requests, errors (anything but a 200, or a failed request), error
 * rate, p50/p99 latency and callbacks delivered; the server's peak RSS and heap (sampled every
 * 100 ms) and heap after GC at the end; what the hostile traffic got (413, 408, 429, refused
 * callbacks) and every non-loopback address the simulator process tried to connect to. Verdict
 * (last-but-one line): `hostile: normal errors 0 of N (plain 0 of M), non-loopback connects 0, ...`;
 * exits 1 when normal traffic saw an error or a packet was aimed beyond loopback.
 *
 *   cd stress && node --conditions=@paykit/source --import tsx scripts/hostile.ts --seconds 20 [--rps 25] [--unbounded]
 *
 * `--unbounded` adds a third run: the same hostile traffic against the edge as it was before
 * (no body limit, node's 60 s / 300 s timeouts, no fair use), for comparison; it has no verdict.
 */
import { fork, type ChildProcess } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { signControl } from "@paykit/signing"
import { requests } from "@paykit/testkit"
import { FLOODER, GOOD_A, GOOD_B, PROBER, RATE, REFUSED_TARGETS } from "../src/hostile/merchants"
import { chunk, formHead, rawExchange } from "../src/raw-http"

const here = dirname(fileURLToPath(import.meta.url))
const argValue = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback
}
const SECONDS = Number(argValue("--seconds", process.env["PAYKIT_HOSTILE_SECONDS"] ?? "20"))
const PER_MERCHANT_RPS = Number(argValue("--rps", "25"))
const HEADERS = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Merchant = { login: string; controlKey: string; endpointIds: number[] }
interface Mem { rss: number; heapUsed: number; heapAfterGc: number; peakRss: number; peakHeap: number; orders: number }
interface Stats { callbackAttempts: number; callbacksRefused: number; callbacksOk: number; refusedReasons: string[]; nonLoopback: string[]; watched: number }

function startServer(unbounded: boolean): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(join(here, "hostile-server.ts"), unbounded ? ["unbounded"] : [], { execArgv: ["--conditions=@paykit/source", "--import", "tsx", "--expose-gc"], stdio: ["ignore", "inherit", "inherit", "ipc"] })
  return new Promise((resolve, reject) => {
    child.once("error", reject)
    child.on("message", (m: { url?: string }) => m.url !== undefined && resolve({ child, url: m.url }))
  })
}
function ask<T>(child: ChildProcess, key: "mem" | "stats"): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: Record<string, unknown>) => {
      if (m[key] === undefined) return
      child.off("message", on)
      resolve(m[key] as T)
    }
    child.on("message", on)
    child.send({ [key]: true })
  })
}

const saleBody = (m: Merchant, callbackUrl: string, clientOrderId?: string) => {
  const fields = requests.sale({ server_callback_url: callbackUrl, ...(clientOrderId === undefined ? {} : { client_orderid: clientOrderId }) })
  return { clientOrderId: fields.client_orderid, body: new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key: m.controlKey, endpointId: m.endpointIds[0]! }) }).toString() }
}
const statusBody = (m: Merchant, clientOrderId: string, orderid: string) => {
  const fields = { login: m.login, client_orderid: clientOrderId, orderid }
  return new URLSearchParams({ ...fields, control: signControl("STATUS", fields, { key: m.controlKey, endpointId: m.endpointIds[0]! }) }).toString()
}

/** Normal traffic of one merchant: sale, then status of its latest order, alternating, paced. */
async function normal(url: string, m: Merchant, callbackUrl: string, until: number, out: { latencies: number[]; errors: string[]; sales: Set<string> }) {
  const interval = 1000 / PER_MERCHANT_RPS
  const start = performance.now()
  let last: { clientOrderId: string; orderid: string } | undefined
  const inFlight = new Set<Promise<void>>()
  for (let i = 0; Date.now() < until; i++) {
    const due = start + i * interval
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const isSale = i % 2 === 0 || last === undefined
    const body = isSale ? saleBody(m, callbackUrl) : { clientOrderId: last!.clientOrderId, body: statusBody(m, last!.clientOrderId, last!.orderid) }
    const op = isSale ? "sale" : "status"
    const t0 = performance.now()
    const p = fetch(`${url}/api/v2/${op}/${m.endpointIds[0]}`, { method: "POST", headers: HEADERS, body: body.body })
      .then(async (res) => {
        const json = (await res.json()) as Record<string, unknown>
        out.latencies.push(performance.now() - t0)
        if (res.status !== 200) out.errors.push(`${op} ${res.status} ${String(json["error-code"])}`)
        else if (isSale) {
          out.sales.add(body.clientOrderId)
          last = { clientOrderId: body.clientOrderId, orderid: String(json["paynet-order-id"]) }
        }
      })
      .catch((error: unknown) => void out.errors.push(`${op} ${error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? "")}` : String(error)}`))
      .finally(() => inFlight.delete(p))
    inFlight.add(p)
  }
  await Promise.all(inFlight)
}

interface Hostile { statuses: Map<string, Map<number, number>>; flood: Map<number, number>; probes: number }
const count = (map: Map<number, number>, status: number) => map.set(status, (map.get(status) ?? 0) + 1)
const tally = (h: Hostile, kind: string, status: number) => {
  const m = h.statuses.get(kind) ?? new Map<number, number>()
  count(m, status)
  h.statuses.set(kind, m)
}

async function loop(until: number, concurrency: number, body: () => Promise<void>) {
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < until) await body()
  }))
}

function hostile(url: string, until: number, h: Hostile): Promise<unknown> {
  const port = Number(new URL(url).port)
  const path = `/api/v2/sale/${FLOODER.endpointIds[0]}`
  const mb = "x".repeat(64 * 1024)
  let flip = 0
  const oversized = loop(until, 4, async () => {
    const declared = flip++ % 2 === 0
    const parts = declared
      ? [formHead(path, `Content-Length: ${60 * 1024 * 1024}\r\n`), ...Array.from({ length: 16 }, () => mb)]
      : [formHead(path, "Transfer-Encoding: chunked\r\n"), ...Array.from({ length: 32 }, () => chunk(mb))]
    tally(h, declared ? "oversized 60 MB declared" : "oversized 2 MB chunked", (await rawExchange(port, parts, { waitMs: 15_000 })).status)
  })
  // A 60 MB form body sent whole, as fast as the server takes it (the issue's first finding).
  const megabyte = `a=${"x".repeat(1024 * 1024 - 2)}`
  const whole = loop(until, 1, async () => {
    const parts = [formHead(path, `Content-Length: ${60 * megabyte.length}\r\n`), ...Array.from({ length: 60 }, () => megabyte)]
    tally(h, "60 MB body sent whole", (await rawExchange(port, parts, { drain: true, waitMs: 30_000 })).status)
  })
  const slowBodies = loop(until, 40, async () => {
    const r = await rawExchange(port, [formHead(path, "Content-Length: 5000\r\n"), ...Array.from({ length: 40 }, () => "a")], { gapMs: 500, waitMs: 25_000 })
    tally(h, "slow body", r.status)
  })
  const slowHeaders = loop(until, 10, async () => {
    const r = await rawExchange(port, [`POST ${path} HTTP/1.1\r\n`, ...Array.from({ length: 30 }, (_, i) => `X-Slow-${i}: 1\r\n`)], { gapMs: 500, waitMs: 25_000 })
    tally(h, "slow headers", r.status)
  })
  // One merchant floods: signed status queries of one of its orders, 48 connections, no pause.
  const flood = (async () => {
    const first = saleBody(FLOODER, "http://127.0.0.1:9/unused")
    const res = await fetch(`${url}${path}`, { method: "POST", headers: HEADERS, body: first.body })
    const orderid = String(((await res.json()) as Record<string, unknown>)["paynet-order-id"])
    const body = statusBody(FLOODER, first.clientOrderId, orderid)
    await loop(until, 48, async () => {
      const r = await fetch(`${url}/api/v2/status/${FLOODER.endpointIds[0]}`, { method: "POST", headers: HEADERS, body }).catch(() => undefined)
      if (r === undefined) return void count(h.flood, 0)
      await r.arrayBuffer()
      count(h.flood, r.status)
    })
  })()
  // Sales naming callback targets a shared sandbox refuses, 20/s.
  const probes = loop(until, 1, async () => {
    const { body } = saleBody(PROBER, REFUSED_TARGETS[h.probes % REFUSED_TARGETS.length]!)
    const r = await fetch(`${url}/api/v2/sale/${PROBER.endpointIds[0]}`, { method: "POST", headers: HEADERS, body })
    await r.arrayBuffer()
    h.probes++
    await sleep(50)
  })
  return Promise.all([oversized, whole, slowBodies, slowHeaders, flood, probes])
}

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? 0 : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!
}
const MB = (n: number) => Number((n / 1048576).toFixed(1))

async function run(withHostile: boolean, unbounded = false) {
  const received = new Set<string>()
  const receiver = createServer((req, res) => {
    const id = new URL(req.url ?? "/", "http://x").searchParams.get("client_orderid")
    if (id !== null) received.add(id)
    res.end("ok")
  })
  receiver.keepAliveTimeout = 10_000
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", () => resolve()))
  const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/paykit/callback`
  const { child, url } = await startServer(unbounded)
  const before = await ask<Mem>(child, "mem")
  const until = Date.now() + SECONDS * 1000
  const out = { latencies: [] as number[], errors: [] as string[], sales: new Set<string>() }
  const h: Hostile = { statuses: new Map(), flood: new Map(), probes: 0 }
  const started = performance.now()
  const hostileDone = withHostile ? hostile(url, until, h) : Promise.resolve()
  await Promise.all([normal(url, GOOD_A, callbackUrl, until, out), normal(url, GOOD_B, callbackUrl, until, out)])
  const normalSeconds = (performance.now() - started) / 1000
  await hostileDone
  // Let the last callbacks arrive (processing 20 ms, then delivery).
  for (let i = 0; i < 50 && [...out.sales].some((id) => !received.has(id)); i++) await sleep(100)
  const stats = await ask<Stats>(child, "stats")
  const after = await ask<Mem>(child, "mem")
  child.send({ close: true })
  await new Promise((r) => child.once("exit", r))
  await new Promise((r) => receiver.close(r))
  const delivered = [...out.sales].filter((id) => received.has(id)).length
  return {
    mode: unbounded ? "unbounded" : withHostile ? "hostile" : "plain",
    normal: {
      requests: out.latencies.length + out.errors.filter((e) => !/^(sale|status) [0-9]{3} /.test(e)).length,
      errors: out.errors.length,
      errorRate: out.errors.length / Math.max(1, out.latencies.length),
      firstErrors: out.errors.slice(0, 5),
      rps: Math.round(out.latencies.length / normalSeconds),
      p50ms: Number(percentile(out.latencies, 50).toFixed(1)),
      p99ms: Number(percentile(out.latencies, 99).toFixed(1)),
      sales: out.sales.size,
      callbacksDelivered: delivered
    },
    server: { peakRssMb: MB(after.peakRss), peakHeapMb: MB(after.peakHeap), heapBeforeMb: MB(before.heapAfterGc), heapAfterGcMb: MB(after.heapAfterGc), orders: after.orders },
    hostile: withHostile
      ? {
          exchanges: Object.fromEntries([...h.statuses].map(([k, m]) => [k, Object.fromEntries(m)])),
          flood: Object.fromEntries(h.flood),
          refusedCallbackSales: h.probes,
          callbacksRefused: stats.callbacksRefused,
          refusedReasons: stats.refusedReasons
        }
      : undefined,
    nonLoopbackConnects: stats.nonLoopback.length,
    socketsWatched: stats.watched
  }
}

console.log(`hostile run: ${SECONDS} s each, normal traffic 2 merchants × ${PER_MERCHANT_RPS} req/s; sandbox: body limit 64 KB, headers 5 s, request 10 s, fair use ${RATE.requestsPerSecond}/s burst ${RATE.burst}, callbacks loopback only; Node ${process.version}`)
const plain = await run(false)
const hostileRun = await run(true)
// --unbounded: the same hostile traffic against the edge as it was before (for comparison only; no verdict).
const unboundedRun = process.argv.includes("--unbounded") ? await run(true, true) : undefined
for (const r of unboundedRun === undefined ? [plain, hostileRun] : [plain, hostileRun, unboundedRun]) {
  console.log(`${r.mode.padEnd(8)} normal: ${r.normal.requests} requests, ${r.normal.errors} errors, ${r.normal.rps} req/s, p50 ${r.normal.p50ms} ms, p99 ${r.normal.p99ms} ms, callbacks ${r.normal.callbacksDelivered}/${r.normal.sales}; server: peak RSS ${r.server.peakRssMb} MB, peak heap ${r.server.peakHeapMb} MB, heap after GC ${r.server.heapBeforeMb} → ${r.server.heapAfterGcMb} MB, ${r.server.orders} orders`)
  if (r.normal.firstErrors.length > 0) console.log(`  first errors: ${r.normal.firstErrors.join(" | ")}`)
}
for (const r of unboundedRun === undefined ? [hostileRun] : [hostileRun, unboundedRun]) {
  const hx = r.hostile!
  console.log(`${r.mode} hostile traffic: ${Object.entries(hx.exchanges).map(([k, m]) => `${k} ${Object.entries(m).map(([s, n]) => `${s}×${n}`).join(",")}`).join("; ")}; flood ${Object.entries(hx.flood).map(([s, n]) => `${s}×${n}`).join(", ")}`)
}
const hx = hostileRun.hostile!
console.log(`  refused-callback sales ${hx.refusedCallbackSales}, callbacks refused ${hx.callbacksRefused} (${hx.refusedReasons.join(" | ")})`)
const nonLoopback = plain.nonLoopbackConnects + hostileRun.nonLoopbackConnects
const ratio = (a: number, b: number) => Number((a / Math.max(b, 1e-9)).toFixed(2))
const goals = {
  "normal error rate under hostile traffic": { goal: 0, ratio: hostileRun.normal.errorRate, met: hostileRun.normal.errors === 0 },
  "peak server heap hostile/plain": { goal: 2, ratio: ratio(hostileRun.server.peakHeapMb, plain.server.peakHeapMb), met: hostileRun.server.peakHeapMb <= 2 * plain.server.peakHeapMb },
  "non-loopback connection attempts": { goal: 0, ratio: nonLoopback, met: nonLoopback === 0 }
}
console.log(`hostile: normal errors ${hostileRun.normal.errors} of ${hostileRun.normal.requests} (plain ${plain.normal.errors} of ${plain.normal.requests}), p99 ${hostileRun.normal.p99ms} ms (plain ${plain.normal.p99ms} ms), peak heap ${hostileRun.server.peakHeapMb} MB (plain ${plain.server.peakHeapMb} MB), non-loopback connects ${nonLoopback} (of ${plain.socketsWatched + hostileRun.socketsWatched} sockets the simulator opened)`)
console.log(JSON.stringify({ bench: "stress/hostile", seconds: SECONDS, plain, hostile: hostileRun, ...(unboundedRun === undefined ? {} : { unbounded: unboundedRun }), goals }))
process.exit(hostileRun.normal.errors === 0 && plain.normal.errors === 0 && nonLoopback === 0 ? 0 : 1)
