/**
 * The simulator side of the hostile-traffic run (hostile.ts), in its own process so its memory is
 * its own (argument `unbounded`: no limits, for comparison): a shared-sandbox setup (default 64 KB body limit, 5 s header and 10 s request timeouts,
 * a per-merchant token bucket, callbacks to loopback only). It sends `{ url }` once listening,
 * answers `{ mem: true }` with its memory, and `{ stats: true }` with its callback figures and
 * every non-loopback address a socket of this process tried to reach (must stay empty).
 */
import net from "node:net"
import { createSimulator, testMerchantConfig } from "@paykit/testkit"
import { MERCHANTS, RATE } from "../src/hostile/merchants"

const nonLoopback: string[] = []
/** Sockets the watch saw (the callbacks to the loopback receiver among them): proof it is live. */
let watched = 0
const original = net.Socket.prototype.connect
// Every outgoing socket of the simulator process, checked where it lands or is looked up to.
net.Socket.prototype.connect = function (this: net.Socket, ...args: unknown[]) {
  const first = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { host?: string } | undefined
  const host = typeof first === "object" && first !== null ? first.host : undefined
  const check = (address: string | undefined) => {
    if (address !== undefined && net.isIP(address) !== 0 && !/^(127\.|::1$|::ffff:127\.)/.test(address)) nonLoopback.push(address)
  }
  watched++
  check(host)
  this.once("lookup", (_e: unknown, address: string) => check(address))
  return (original as (...a: unknown[]) => net.Socket).apply(this, args)
} as typeof net.Socket.prototype.connect

const gc = (globalThis as { gc?: () => void }).gc
let peakRss = 0
let peakHeap = 0
const sampler = setInterval(() => {
  const m = process.memoryUsage()
  peakRss = Math.max(peakRss, m.rss)
  peakHeap = Math.max(peakHeap, m.heapUsed)
}, 100)

// `unbounded`: the edge as it was before issue 18 (no body limit, node's own 60 s / 300 s
// timeouts, no fair use), for comparison only.
const unbounded = process.argv[2] === "unbounded"
const sim = createSimulator({
  clock: "real",
  processingDelayMs: 20,
  merchants: [testMerchantConfig, ...MERCHANTS],
  ...(unbounded
    ? { limits: { bodyBytes: 2 ** 30, headersTimeoutMs: 60_000, requestTimeoutMs: 300_000 } }
    : { limits: { headersTimeoutMs: 5_000, requestTimeoutMs: 10_000 }, rateLimit: RATE })
})
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
process.on("message", (m: { mem?: boolean; settled?: boolean; stats?: boolean; close?: boolean }) => {
  if (m.mem === true) {
    const now = process.memoryUsage()
    gc?.()
    const after = process.memoryUsage()
    process.send?.({ mem: { rss: now.rss, heapUsed: now.heapUsed, heapAfterGc: after.heapUsed, peakRss, peakHeap, orders: sim.orders().length } })
  }
  if (m.stats === true) {
    const attempts = sim.callbackAttempts()
    process.send?.({
      stats: {
        callbackAttempts: attempts.length,
        callbacksRefused: attempts.filter((a) => a.refused !== undefined).length,
        callbacksOk: attempts.filter((a) => a.outcome === 200).length,
        refusedReasons: [...new Set(attempts.filter((a) => a.refused !== undefined).map((a) => a.refused!.split(";")[0]))].slice(0, 6),
        nonLoopback,
        watched
      }
    })
  }
  if (m.close === true) {
    clearInterval(sampler)
    void sim.close().then(() => process.exit(0))
  }
})
process.send?.({ url: server.url })
