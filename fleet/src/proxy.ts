/**
 * The load balancer in front of the fleet's callback endpoints. The simulator delivers every callback
 * here; the proxy sends it to a random live worker and, on purpose, also misbehaves:
 * - duplicated: the same callback to two different workers at once (a race across instances);
 * - held back: delivered after up to 800 ms, so callbacks overtake each other (reordered);
 * - replayed: delivered again 1–3 s after it was answered, to any worker (a late redelivery).
 * The simulator gets the worker's answer (200 if either of a duplicated pair said 200); a worker
 * that is down answers 502 and the simulator retries later.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Rng } from "@paykit/stress/rng"

export interface ProxyStats {
  received: number
  duplicated: number
  heldBack: number
  replayed: number
  /** Answers other than 200 from a worker (in progress elsewhere, not confirmed yet, ...). */
  refused: number
  /** A worker that could not be reached (killed, restarting), or none was up. */
  down: number
  /** Why: `none up`, or the error's code (`ECONNREFUSED`, `TimeoutError`, ...). */
  downBy: Record<string, number>
}

export interface CallbackProxy {
  readonly url: string
  readonly stats: ProxyStats
  /** Turns the misbehaviour off (the final flush). */
  calm(): void
  close(): Promise<void>
}

/** `targets()` lists the callback ports of the workers that are up now. */
export async function startProxy(rng: Rng, targets: () => ReadonlyArray<number>): Promise<CallbackProxy> {
  const stats: ProxyStats = { received: 0, duplicated: 0, heldBack: 0, replayed: 0, refused: 0, down: 0, downBy: {} }
  const downBy = (why: string) => {
    stats.down++
    stats.downBy[why] = (stats.downBy[why] ?? 0) + 1
  }
  let calm = false
  const timers = new Set<NodeJS.Timeout>()
  const later = (ms: number, f: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      f()
    }, ms)
    timers.add(timer)
  }
  const pick = (except?: number): number | undefined => {
    const ports = targets().filter((p) => p !== except)
    return ports.length === 0 ? undefined : ports[rng.int(ports.length)]
  }
  const deliver = async (port: number | undefined, path: string): Promise<number> => {
    if (port === undefined) {
      downBy("none up")
      return 502
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(4_000) })
      await response.arrayBuffer()
      if (response.status !== 200) stats.refused++
      return response.status
    } catch (error) {
      const e = error as { name?: unknown; cause?: { code?: unknown } }
      downBy(String(e.cause?.code ?? e.name ?? "error"))
      return 502
    }
  }
  const server: Server = createServer((incoming, outgoing) => {
    stats.received++
    incoming.resume()
    const path = incoming.url ?? "/"
    const roll = calm ? 1 : rng.next()
    let work: Promise<number>
    if (roll < 0.1) {
      stats.duplicated++
      const a = pick()
      const b = pick(a)
      work = Promise.all([deliver(a, path), deliver(b ?? a, path)]).then(([x, y]) => (x === 200 || y === 200 ? 200 : x))
    } else if (roll < 0.2) {
      stats.heldBack++
      const hold = 50 + rng.int(750)
      work = new Promise<number>((resolve) => later(hold, () => resolve(deliver(pick(), path))))
    } else {
      work = deliver(pick(), path)
      if (roll < 0.25) {
        stats.replayed++
        const delay = 1_000 + rng.int(2_000)
        void work.then(() => later(delay, () => void deliver(pick(), path)))
      }
    }
    void work.then((status) => {
      outgoing.writeHead(status, { "content-type": "text/plain" })
      outgoing.end(status === 200 ? "OK" : "no")
    })
  })
  server.keepAliveTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/paykit/callback`,
    stats,
    calm: () => {
      calm = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
