/**
 * Simulator throughput: sale + status pairs per second, in process (`sim.fetch`) and over loopback
 * HTTP (`sim.listen()`), beside a bare `node:http` server answering a fixed JSON body under the
 * same load generator in the same run. Prints the ratio (goal: ≥ 0.5 over HTTP) and one JSON line.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/simulator/simulator.bench.ts
 */
import { Agent, createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { signControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"

const DURATION_MS = Number(process.env["BENCH_DURATION_MS"] ?? 5000)
const CONCURRENCY = Number(process.env["BENCH_CONCURRENCY"] ?? 32)
const key = testMerchant.controlKey
const endpointId = testMerchant.endpointId

/** The form bodies of one sale + status pair (the status body needs the sale's orderid). */
function saleBody(): { body: string; clientOrderId: string } {
  const fields = requests.sale()
  const control = signControl("SALE", fields, { key, endpointId })
  return { body: new URLSearchParams({ ...fields, control }).toString(), clientOrderId: fields.client_orderid }
}
function statusBody(clientOrderId: string, orderid: string): string {
  const fields = { login: testMerchant.login, client_orderid: clientOrderId, orderid }
  return new URLSearchParams({ ...fields, control: signControl("STATUS", fields, { key, endpointId }) }).toString()
}

const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }

/** Runs `pair` from CONCURRENCY workers for `durationMs`; returns pairs per second. */
async function load(pair: () => Promise<void>, durationMs = DURATION_MS): Promise<number> {
  // Warm up (JIT, sockets) before measuring.
  const warmUntil = performance.now() + 200
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < warmUntil) await pair()
  }))
  let done = 0
  const start = performance.now()
  const until = start + durationMs
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < until) {
      await pair()
      done++
    }
  }))
  return done / ((performance.now() - start) / 1000)
}

/** A minimal keep-alive POST with node:http. */
function post(agent: Agent, port: number, path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: "127.0.0.1", port, path, method: "POST", agent, headers: { ...headers, "content-length": Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }))
      res.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })
}

function orderIdOf(text: string): string {
  return String((JSON.parse(text) as Record<string, unknown>)["paynet-order-id"])
}

async function main(): Promise<void> {
  // 1. In process: no socket at all.
  const sim = createSimulator({ processingDelayMs: 0 })
  const base = "http://sim.bench"
  const inProcess = await load(async () => {
    const sale = saleBody()
    const r1 = await sim.fetch(new Request(`${base}/api/v2/sale/${endpointId}`, { method: "POST", headers, body: sale.body }))
    if (r1.status !== 200) throw new Error(`sale ${r1.status}: ${await r1.text()}`)
    const orderid = orderIdOf(await r1.text())
    const r2 = await sim.fetch(new Request(`${base}/api/v2/status/${endpointId}`, { method: "POST", headers, body: statusBody(sale.clientOrderId, orderid) }))
    if (r2.status !== 200) throw new Error(`status ${r2.status}`)
    await r2.text()
  })
  sim.reset()

  // 2 and 3. The simulator over loopback HTTP, and the baseline: a bare node:http server answering
  // a fixed JSON body, driven by the same generator with the same requests. Both servers listen at
  // once and the runs alternate in slices, so load from other processes hits both alike.
  const server = await sim.listen({ port: 0 })
  const simPort = Number(new URL(server.url).port)
  const fixed = JSON.stringify({ type: "async-response", status: "processing", "serial-number": "00000000-0000-0000-0000-000000000000", "merchant-order-id": "x", "paynet-order-id": "1000001" })
  const bare = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/vnd.pay+json", "content-length": Buffer.byteLength(fixed) })
      res.end(fixed)
    })
  })
  await new Promise<void>((resolve) => bare.listen(0, "127.0.0.1", resolve))
  const barePort = (bare.address() as AddressInfo).port
  const agent1 = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const agent2 = new Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const simPair = async () => {
    const sale = saleBody()
    const r1 = await post(agent1, simPort, `/api/v2/sale/${endpointId}`, sale.body)
    if (r1.status !== 200) throw new Error(`sale ${r1.status}: ${r1.text}`)
    const r2 = await post(agent1, simPort, `/api/v2/status/${endpointId}`, statusBody(sale.clientOrderId, orderIdOf(r1.text)))
    if (r2.status !== 200) throw new Error(`status ${r2.status}`)
  }
  const barePair = async () => {
    const sale = saleBody()
    const r1 = await post(agent2, barePort, `/api/v2/sale/${endpointId}`, sale.body)
    await post(agent2, barePort, `/api/v2/status/${endpointId}`, statusBody(sale.clientOrderId, orderIdOf(r1.text)))
  }
  const SLICES = 4
  let simSum = 0
  let bareSum = 0
  for (let i = 0; i < SLICES; i++) {
    simSum += await load(simPair, DURATION_MS / SLICES)
    bareSum += await load(barePair, DURATION_MS / SLICES)
  }
  const overHttp = simSum / SLICES
  const baseline = bareSum / SLICES
  agent1.destroy()
  agent2.destroy()
  await server.close()
  await sim.close()
  bare.closeAllConnections()
  await new Promise<void>((resolve) => bare.close(() => resolve()))

  const ratio = overHttp / baseline
  console.log(`concurrency ${CONCURRENCY}, ${DURATION_MS} ms per target (HTTP runs alternate in ${SLICES} slices)`)
  console.log(`in-process        ${inProcess.toFixed(0).padStart(8)} sale+status pairs/s`)
  console.log(`simulator  (HTTP) ${overHttp.toFixed(0).padStart(8)} pairs/s`)
  console.log(`bare node:http    ${baseline.toFixed(0).padStart(8)} pairs/s`)
  console.log(`ratio simulator/bare over HTTP: ${ratio.toFixed(2)} (goal >= 0.5) ${ratio >= 0.5 ? "OK" : "BELOW GOAL"}`)
  console.log(JSON.stringify({ bench: "simulator", concurrency: CONCURRENCY, durationMs: DURATION_MS, inProcessPairsPerSec: Math.round(inProcess), httpPairsPerSec: Math.round(overHttp), bareHttpPairsPerSec: Math.round(baseline), ratio: Number(ratio.toFixed(3)), goal: 0.5 }))
}

await main()
