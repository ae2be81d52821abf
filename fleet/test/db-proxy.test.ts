/**
 * The stalling database proxy, over real loopback sockets to an echo server: it forwards both ways,
 * a stall stops every byte in both directions on every connection (and on connections opened during
 * it) without closing or resetting any, and healing delivers everything that waited, in order.
 *
 * "Nothing arrived during the stall" is checked after a short real wait: on a slow machine that wait
 * may prove less (the bytes could not have arrived yet anyway), never fail a correct proxy.
 */
import { createServer, connect, type Server, type Socket } from "node:net"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startDbProxy, type DbProxy } from "../src/db-proxy"

let echo: Server
let received: Buffer[]
/** The server's side of each connection, so a test can make the server speak on its own. */
let serverSides: Socket[]
let proxy: DbProxy | undefined
const sockets: Socket[] = []

beforeEach(async () => {
  received = []
  serverSides = []
  echo = createServer((s) => {
    serverSides.push(s)
    s.on("data", (chunk) => {
      received.push(chunk)
      s.write(chunk)
    })
    s.on("error", () => undefined)
  })
  await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve))
})
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy()
  await proxy?.close()
  proxy = undefined
  await new Promise<void>((resolve) => echo.close(() => resolve()))
})

const echoPort = () => (echo.address() as { port: number }).port
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
async function client(port: number) {
  const socket = connect({ host: "127.0.0.1", port })
  sockets.push(socket)
  const events: string[] = []
  let text = ""
  socket.on("data", (chunk) => (text += chunk.toString()))
  socket.on("close", () => events.push("close"))
  socket.on("error", (e) => events.push(`error ${(e as { code?: string }).code ?? e.message}`))
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve)
    socket.once("error", reject)
  })
  return { socket, events, text: () => text }
}
const until = async (what: () => boolean, label: string) => {
  const guard = Date.now() + 10_000
  while (!what()) {
    if (Date.now() > guard) throw new Error(`hang guard: ${label}`)
    await sleep(5)
  }
}

describe("the stalling database proxy", () => {
  it("forwards both ways, holds every byte during a stall without closing anything, and delivers it all in order on heal", async () => {
    proxy = await startDbProxy({ host: "127.0.0.1", port: echoPort() })
    const a = await client(proxy.port)
    a.socket.write("hello")
    await until(() => a.text() === "hello", "the echo before the stall")

    proxy.stall(60_000)
    expect(proxy.stalled()).toBe(true)
    a.socket.write(" during")
    // A connection opened during the stall is held too.
    const b = await client(proxy.port)
    b.socket.write("late")
    await sleep(300)
    expect(Buffer.concat(received).toString()).toBe("hello")
    expect(a.text()).toBe("hello")
    expect(b.text()).toBe("")
    expect([...a.events, ...b.events]).toEqual([])

    proxy.heal()
    await until(() => a.text() === "hello during" && b.text() === "late", "the echo after the heal")
    expect([...a.events, ...b.events]).toEqual([])
    expect(proxy.stats).toMatchObject({ connections: 2, stalls: 1 })
    expect(proxy.stats.stalledMs).toBeGreaterThanOrEqual(250)
  })

  it("holds what the server sends during a stall until it heals", async () => {
    proxy = await startDbProxy({ host: "127.0.0.1", port: echoPort() })
    const a = await client(proxy.port)
    a.socket.write("x")
    await until(() => a.text() === "x", "the first echo")
    proxy.stall(60_000)
    serverSides[0]!.write("notice")
    await sleep(300)
    expect(a.text()).toBe("x")
    expect(a.events).toEqual([])
    proxy.heal()
    await until(() => a.text() === "xnotice", "the server's bytes after the heal")
  })

  it("ends a stall by itself after its time, and a longer stall during one extends it", async () => {
    proxy = await startDbProxy({ host: "127.0.0.1", port: echoPort() })
    const a = await client(proxy.port)
    proxy.stall(50)
    proxy.stall(400)
    expect(proxy.stats.stalls).toBe(2)
    a.socket.write("ping")
    await until(() => !proxy!.stalled(), "the stall's end")
    await until(() => a.text() === "ping", "the echo after the stall")
    expect(proxy.stats.stalledMs).toBeGreaterThanOrEqual(350)
  })
})
