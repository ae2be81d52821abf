/**
 * A loopback TCP proxy between one worker and PostgreSQL that can stall: for a while it stops
 * forwarding in both directions, on every connection it carries and on new ones, without closing or
 * resetting any of them — a network partition that heals. Bytes that arrive during a stall stay in the
 * sockets' buffers (reading is paused, so TCP's own flow control holds the sender) and flow once it
 * ends, as after a partition; no byte is lost, reordered or invented.
 */
import { createServer, connect, type Server, type Socket } from "node:net"

export interface DbProxyStats {
  /** Connections opened through the proxy. */
  connections: number
  /** Stalls asked for (one asked during another extends it). */
  stalls: number
  /** Real ms the proxy spent stalled. */
  stalledMs: number
}

export interface DbProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number
  readonly stats: DbProxyStats
  /** Whether it is stalled now. */
  stalled(): boolean
  /** Stops forwarding for `ms` (a stall during a stall extends it to the later end). */
  stall(ms: number): void
  /** Ends any stall now. */
  heal(): void
  /** Closes the listener and every connection. */
  close(): Promise<void>
}

interface Link {
  readonly client: Socket
  readonly server: Socket
}

/** Starts a proxy to `host:port` on a free port of 127.0.0.1. */
export async function startDbProxy(target: { readonly host: string; readonly port: number }): Promise<DbProxy> {
  const stats: DbProxyStats = { connections: 0, stalls: 0, stalledMs: 0 }
  const links = new Set<Link>()
  let stalledUntil = 0
  let stalledSince = 0
  let healTimer: NodeJS.Timeout | undefined

  const isStalled = () => stalledUntil > 0
  // One direction: forwards while not stalled, and holds the reader while the writer's buffer is full.
  const forward = (from: Socket, to: Socket) => {
    from.on("data", (chunk: Buffer) => {
      if (!to.write(chunk)) {
        from.pause()
        to.once("drain", () => {
          if (!isStalled()) from.resume()
        })
      }
    })
    from.on("end", () => to.end())
  }
  const open = (client: Socket) => {
    stats.connections++
    const server = connect({ host: target.host, port: target.port })
    const link: Link = { client, server }
    links.add(link)
    const close = () => {
      links.delete(link)
      client.destroy()
      server.destroy()
    }
    client.on("error", close)
    server.on("error", close)
    client.on("close", close)
    server.on("close", close)
    client.setNoDelay(true)
    server.setNoDelay(true)
    forward(client, server)
    forward(server, client)
    if (isStalled()) {
      client.pause()
      server.pause()
    }
  }
  const resumeAll = () => {
    if (healTimer !== undefined) clearTimeout(healTimer)
    healTimer = undefined
    if (!isStalled()) return
    stats.stalledMs += Date.now() - stalledSince
    stalledUntil = 0
    for (const link of links) {
      link.client.resume()
      link.server.resume()
    }
  }

  const listener: Server = createServer(open)
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject)
    listener.listen(0, "127.0.0.1", () => resolve())
  })
  const address = listener.address()
  const port = typeof address === "object" && address !== null ? address.port : 0

  return {
    port,
    stats,
    stalled: isStalled,
    stall: (ms) => {
      const until = Date.now() + ms
      stats.stalls++
      if (!isStalled()) {
        stalledSince = Date.now()
        for (const link of links) {
          link.client.pause()
          link.server.pause()
        }
      }
      if (until <= stalledUntil) return
      stalledUntil = until
      if (healTimer !== undefined) clearTimeout(healTimer)
      healTimer = setTimeout(resumeAll, ms)
    },
    heal: resumeAll,
    close: () =>
      new Promise<void>((resolve) => {
        resumeAll()
        for (const link of links) {
          link.client.destroy()
          link.server.destroy()
        }
        links.clear()
        listener.close(() => resolve())
      })
  }
}
