/**
 * Soak: sustained payments (sale, then awaitFinal) through the Promise client against the in-process
 * simulator (processingDelayMs 0, settlement after the default day, virtual clock) in ONE process,
 * far past the simulator's retention limit (`retention.maxOrders`). The heap after full GCs is
 * reported at ten checkpoints; once the limit is reached the simulator forgets its oldest final
 * orders, so the heap must stay flat from there on.
 *
 * Goal: heap at the end / heap at the first checkpoint past the limit ≤ 1.10 (lower is better; the
 * baseline is the same process's heap once the store is full). Also printed: heap per stored order
 * while the store fills (before the limit), and the heap after `sim.reset()`.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/stress/soak.bench.ts
 * It re-spawns itself with --expose-gc when started without it (run-all.ts does not pass it).
 * PAYKIT_BENCH_QUICK=1 → 30,000 payments with a limit of 5,000 orders (default 100,000 and 20,000);
 * PAYKIT_SOAK_PAYMENTS and PAYKIT_SOAK_MAX_ORDERS override.
 */
import { spawnSync } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { createPayClient } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  const run = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, fileURLToPath(import.meta.url)], { stdio: "inherit", env: process.env })
  process.exit(run.status ?? 1)
}

const quick = process.env["PAYKIT_BENCH_QUICK"] === "1"
const TOTAL = Number(process.env["PAYKIT_SOAK_PAYMENTS"] ?? (quick ? 30_000 : 100_000))
const MAX_ORDERS = Number(process.env["PAYKIT_SOAK_MAX_ORDERS"] ?? (quick ? 5_000 : 20_000))
const STEP = TOTAL / 10
const CONCURRENCY = 32
const GOAL = 1.1
const mb = (n: number) => (n / 1048576).toFixed(1)
const load = () => loadavg().map((l) => l.toFixed(1)).join(" ")

const sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: MAX_ORDERS } })
const pay = createPayClient({
  baseUrl: "http://sim.test",
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  endpointId: testMerchant.endpointId,
  fetch: sim.fetch
})

async function heap() {
  // Several GCs with a macrotask between them: FinalizationRegistry callbacks (undici registers one
  // per Request that carries an AbortSignal, i.e. every client attempt) run only in a later task,
  // and what they hold is freed by the next GC. Measured synchronously after gc() the heap shows
  // ~2 KB per call that is in fact collectable.
  for (let i = 0; i < 4; i++) {
    gc!()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const m = process.memoryUsage()
  return { heapUsed: m.heapUsed, rss: m.rss, orders: sim.orders().length }
}

let next = 0
let failures = 0
const start = performance.now()
async function pump(until: number) {
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < until) {
      next++
      const fields = requests.sale()
      try {
        const ack = await pay.sale(fields)
        const final = await pay.awaitFinal({ client_orderid: fields.client_orderid, orderid: String(ack["paynet-order-id"]) })
        if (final._tag !== "Final") failures++
      } catch {
        failures++
      }
    }
  }))
}

console.log(`soak: ${TOTAL} payments (sale + awaitFinal), ${CONCURRENCY} concurrent, in process; retention maxOrders ${MAX_ORDERS}; load average ${load()}`)
const base = await heap()
console.log(`${"payments".padStart(9)} ${"orders kept".padStart(11)} ${"heap MB".padStart(8)} ${"RSS MB".padStart(7)}  load`)
console.log(`${"0".padStart(9)} ${String(base.orders).padStart(11)} ${mb(base.heapUsed).padStart(8)} ${mb(base.rss).padStart(7)}  ${load()}`)
const points: Array<{ payments: number; orders: number; heapMB: number; rssMB: number }> = [{ payments: 0, orders: base.orders, heapMB: Number(mb(base.heapUsed)), rssMB: Number(mb(base.rss)) }]
let beforeLimit: { payments: number; heapUsed: number; orders: number } | undefined
let pastLimit: { payments: number; heapUsed: number } | undefined
for (let at = STEP; at <= TOTAL; at += STEP) {
  await pump(at)
  const h = await heap()
  points.push({ payments: at, orders: h.orders, heapMB: Number(mb(h.heapUsed)), rssMB: Number(mb(h.rss)) })
  console.log(`${String(at).padStart(9)} ${String(h.orders).padStart(11)} ${mb(h.heapUsed).padStart(8)} ${mb(h.rss).padStart(7)}  ${load()}`)
  if (at < MAX_ORDERS) beforeLimit = { payments: at, heapUsed: h.heapUsed, orders: h.orders }
  // The first checkpoint with the store pruned at least once and refilled by a batch of orders, and
  // the client's own in-memory intent ledger full (it keeps the last 10,000 finished intents).
  else if (pastLimit === undefined && at >= Math.max(MAX_ORDERS * 1.25, 12_000)) pastLimit = { payments: at, heapUsed: h.heapUsed }
}
const seconds = (performance.now() - start) / 1000
const end = await heap()
sim.reset()
const afterReset = await heap()

const perOrder = beforeLimit === undefined ? Number.NaN : (beforeLimit.heapUsed - base.heapUsed) / beforeLimit.orders
const ratio = pastLimit === undefined ? Number.NaN : end.heapUsed / pastLimit.heapUsed
const met = Number.isFinite(ratio) && ratio <= GOAL && failures === 0 && end.orders <= MAX_ORDERS + 1
console.log(`${(TOTAL / seconds).toFixed(0)} payments/s, ${failures} failures; ${end.orders} orders kept at the end (limit ${MAX_ORDERS})`)
// The client's intent ledger grows beside the store until it holds its 10,000 finished intents, so
// this is an upper bound; bench/simulator/order-heap.bench.ts measures the simulator's order alone.
console.log(`heap per payment while the store fills (simulator order + client intent): ${(perOrder / 1024).toFixed(2)} KB`)
if (pastLimit !== undefined) {
  console.log(`heap past the limit (at ${pastLimit.payments}) ${mb(pastLimit.heapUsed)} MB → at ${TOTAL} ${mb(end.heapUsed)} MB: ratio ${ratio.toFixed(3)} (goal ≤ ${GOAL}) → ${met ? "flat" : "NOT flat"}`)
}
console.log(`after sim.reset(): ${mb(afterReset.heapUsed)} MB (start ${mb(base.heapUsed)} MB)`)
console.log(JSON.stringify({
  bench: "stress/soak",
  payments: TOTAL,
  maxOrders: MAX_ORDERS,
  failures,
  paymentsPerSecond: Math.round(TOTAL / seconds),
  ordersKeptAtEnd: end.orders,
  heapStartMB: Number(mb(base.heapUsed)),
  heapPastLimitMB: pastLimit === undefined ? null : Number(mb(pastLimit.heapUsed)),
  heapAtEndMB: Number(mb(end.heapUsed)),
  heapAfterResetMB: Number(mb(afterReset.heapUsed)),
  rssAtEndMB: Number(mb(end.rss)),
  heapPerPaymentWhileFillingKB: Number((perOrder / 1024).toFixed(2)),
  checkpoints: points,
  loadAverage: load(),
  goals: { "heap growth after retention limit (heap at end / heap past the limit, ≤ 1.10)": { goal: GOAL, ratio: Number(ratio.toFixed(3)), met } }
}))
await sim.close()
process.exit(met ? 0 : 1)
