/**
 * The server side of load.bench.ts, run in its own process so the load generator does not share
 * its event loop: either the simulator (`sim`) or the baseline, a bare node:http server answering a
 * fixed JSON body (`bare`). It sends `{ url }` to the parent once listening and answers
 * `{ mem: true }` with its memory (after a GC when run with --expose-gc) and the number of orders.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"

const mode = process.argv[2] === "bare" ? "bare" : "sim"
const gc = (globalThis as { gc?: () => void }).gc

function memory(orders: number) {
  gc?.()
  const m = process.memoryUsage()
  return { rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, orders, gc: gc !== undefined }
}

if (mode === "sim") {
  // Imported only here, so the bare baseline's memory is not charged with the simulator's code.
  const { createSimulator } = await import("@paykit/testkit")
  // Every status request of the load generators asks about one order made at the start. Under the
  // default retention (200,000 orders, oldest forgotten first) a 60 s run at ~17k req/s forgets
  // it, and every later status request fails (320,814 of 1,041,731 in the 2026-11-26 run): the
  // limit is raised here so the benches measure serving, not forgetting.
  const sim = createSimulator({ clock: "real", processingDelayMs: 20, retention: { maxOrders: 5_000_000 } })
  const server = await sim.listen({ port: 0, host: "127.0.0.1" })
  process.on("message", (m: { mem?: boolean; close?: boolean }) => {
    if (m.mem === true) process.send?.({ mem: memory(sim.orders().length) })
    if (m.close === true) void sim.close().then(() => process.exit(0))
  })
  process.send?.({ url: server.url })
} else {
  const body = JSON.stringify({ type: "status-response", status: "approved", "serial-number": "00000000-0000-4000-8000-000000000000", "merchant-order-id": "bare", "paynet-order-id": "1000001" })
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/vnd.pay+json", "content-length": Buffer.byteLength(body) })
      res.end(body)
    })
  })
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  process.on("message", (m: { mem?: boolean; close?: boolean }) => {
    if (m.mem === true) process.send?.({ mem: memory(0) })
    if (m.close === true) server.close(() => process.exit(0))
  })
  process.send?.({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
}
