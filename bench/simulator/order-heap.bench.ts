/**
 * Heap per stored order: N sales through `sim.fetch` (in process), the clock moved past settlement
 * so every order is final and nothing is queued for it, then the heap after full GCs, compared with
 * the same simulator before the sales. (heap after − heap before) / N is the cost of one retained
 * order record with its indexes. Goal (issue #14): ≤ 1 KB. The baseline is the empty simulator of
 * the same run; the goal's ratio is 1 KB / measured (≥ 1 means met).
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/simulator/order-heap.bench.ts
 * It re-spawns itself with --expose-gc when started without it.
 */
import { spawnSync } from "node:child_process"
import { loadavg } from "node:os"
import { fileURLToPath } from "node:url"
import { signControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"

const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) {
  const run = spawnSync(process.execPath, ["--expose-gc", ...process.execArgv, fileURLToPath(import.meta.url)], { stdio: "inherit", env: process.env })
  process.exit(run.status ?? 1)
}

const N = Number(process.env["PAYKIT_ORDER_HEAP_N"] ?? 20_000)
const GOAL_BYTES = 1024
const key = testMerchant.controlKey
const endpointId = testMerchant.endpointId
const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }

async function heapUsed(): Promise<number> {
  for (let i = 0; i < 4; i++) {
    gc!()
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return process.memoryUsage().heapUsed
}

// Unbounded retention: every order must stay for the measurement.
const sim = createSimulator({ processingDelayMs: 0, retention: { maxOrders: Number.POSITIVE_INFINITY, maxAgeMs: Number.POSITIVE_INFINITY } })
async function sale(): Promise<void> {
  const fields = requests.sale()
  const body = new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key, endpointId }) }).toString()
  const res = await sim.fetch(new Request(`http://sim.bench/api/v2/sale/${endpointId}`, { method: "POST", headers, body }))
  if (res.status !== 200) throw new Error(`sale ${res.status}: ${await res.text()}`)
  await res.text()
}
// Warm up (JIT, caches) with orders that are then forgotten by reset().
for (let i = 0; i < 2000; i++) await sale()
await sim.clock.advance(25 * 60 * 60 * 1000)
sim.reset()
const before = await heapUsed()
for (let i = 0; i < N; i++) await sale()
await sim.clock.advance(25 * 60 * 60 * 1000)
const after = await heapUsed()
const orders = sim.orders()
if (orders.length !== N) throw new Error(`expected ${N} orders, found ${orders.length}`)
if (orders.some((o) => o.status !== "approved" || !o.settled)) throw new Error("not every order is approved and settled")
const perOrder = (after - before) / N
const ratio = GOAL_BYTES / perOrder
const load = loadavg().map((l) => l.toFixed(2)).join(" ")
console.log(`order heap: ${N} settled sale orders, heap ${(before / 1048576).toFixed(1)} → ${(after / 1048576).toFixed(1)} MB after GC; load average ${load}`)
console.log(`heap per stored order: ${perOrder.toFixed(0)} B = ${(perOrder / 1024).toFixed(2)} KB (goal ≤ 1 KB) ${perOrder <= GOAL_BYTES ? "met" : "NOT MET"}`)
console.log(JSON.stringify({
  bench: "simulator/order-heap",
  orders: N,
  heapBeforeMB: Number((before / 1048576).toFixed(2)),
  heapAfterMB: Number((after / 1048576).toFixed(2)),
  bytesPerOrder: Math.round(perOrder),
  loadAverage: load,
  goals: { "simulator heap per stored order ≤ 1 KB (ratio = 1 KB / measured)": { goal: 1, ratio: Number(ratio.toFixed(3)), met: perOrder <= GOAL_BYTES } }
}))
await sim.close()
