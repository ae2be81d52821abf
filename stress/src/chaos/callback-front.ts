/**
 * The merchant's callback receiver: a real node:http server on loopback whose "front" misbehaves
 * on purpose before the client's `callbackHandler` sees a callback:
 * - lost: answers 500 without delivering (the simulator must retry);
 * - duplicated: delivers the same callback to the handler twice;
 * - held back: keeps it for a while and delivers it later, so callbacks of one order overtake
 *   each other (out of order).
 * Everything else is delivered once, at once. The handler's own answer goes back to the simulator,
 * so a callback the handler refuses (403/500) is retried too.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Rng } from "../rng"

export interface FrontOptions {
  readonly rng: Rng
  readonly handler: (request: Request) => Promise<Response>
  /** Probability of each misbehaviour per incoming callback. */
  readonly lost: number
  readonly duplicated: number
  readonly heldBack: number
  /** Upper bound of a hold-back delay (real ms); below the simulator's 5 s delivery timeout. */
  readonly maxHoldMs: number
}

export interface FrontStats {
  received: number
  lost: number
  duplicated: number
  heldBack: number
  delivered: number
  /** Handler answers other than 200 (bad signature, user code failed). */
  refused: number
}

export interface CallbackFront {
  readonly url: string
  readonly stats: FrontStats
  /** Turns the misbehaviour off (the final flush must be able to end). */
  calm(): void
  close(): Promise<void>
}

export async function startCallbackFront(options: FrontOptions): Promise<CallbackFront> {
  const stats: FrontStats = { received: 0, lost: 0, duplicated: 0, heldBack: 0, delivered: 0, refused: 0 }
  let calm = false
  let base = ""
  const deliver = async (path: string): Promise<number> => {
    const response = await options.handler(new Request(base + path, { method: "GET" }))
    await response.body?.cancel().catch(() => undefined)
    stats.delivered++
    if (response.status !== 200) stats.refused++
    return response.status
  }
  const server: Server = createServer((incoming, outgoing) => {
    stats.received++
    const path = incoming.url ?? "/"
    incoming.resume()
    const answer = (status: number) => {
      outgoing.writeHead(status, { "content-type": "text/plain" })
      outgoing.end(status === 200 ? "OK" : "no")
    }
    const roll = calm ? 1 : options.rng.next()
    const { lost, duplicated, heldBack } = options
    let work: Promise<number>
    if (roll < lost) {
      stats.lost++
      work = Promise.resolve(500)
    } else if (roll < lost + duplicated) {
      stats.duplicated++
      // Two deliveries of one callback, concurrently: the handler's dedupe must hold under a race.
      work = Promise.all([deliver(path), deliver(path)]).then(([a, b]) => (a === 200 && b === 200 ? 200 : 500))
    } else if (roll < lost + duplicated + heldBack) {
      stats.heldBack++
      const hold = 50 + options.rng.int(options.maxHoldMs)
      work = new Promise<void>((resolve) => setTimeout(resolve, hold)).then(() => deliver(path))
    } else {
      work = deliver(path)
    }
    work.then(answer, () => answer(500))
  })
  // Keep connections open: with a 1 s keep-alive, undici opens a new connection per callback, and
  // bursts of connects overflow the accept queue (TcpExtListenOverflows) → SYN retransmits → the
  // simulator's 5 s delivery timeout. Measured: 28,845 timed-out attempts in a 10k run at 1 s, 0 at 10 s.
  server.keepAliveTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    url: `${base}/paykit/callback`,
    stats,
    calm: () => {
      calm = true
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
