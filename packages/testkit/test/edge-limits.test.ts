/**
 * Bounded requests over a real socket (issue 18, item 1): a body over the limit is a 413 before it
 * is read, slow headers or bodies are a 408, a malformed or truncated request is a 400 (never a
 * 500), every refusal has the gateway's JSON error shape, and the server keeps serving.
 */
import { connect } from "node:net"
import { Schema } from "effect"
import { ServerErrorResponse, ValidationErrorResponse } from "@paykit/contracts"
import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, type RequestRecord, type Simulator } from "../src/index"
import { DEFAULT_LIMITS, RequestLimitsError } from "../src/http/edge"
import { signedRequest } from "./helpers"

const strict = { errors: "all", onExcessProperty: "error" } as const
let sim: Simulator | undefined
afterEach(async () => {
  await sim?.close()
  sim = undefined
})

async function start(limits = {}, records: RequestRecord[] = []) {
  sim = createSimulator({ processingDelayMs: 0, limits, onRequest: (r) => records.push(r) })
  const server = await sim.listen({ port: 0, host: "127.0.0.1" })
  return { url: server.url, port: Number(new URL(server.url).port), records }
}

/** Every exchange here ends with the server closing: waiting longer is only a guard against a hang. */
const HANG_GUARD_MS = 30_000

/**
 * Writes `parts` to a raw socket (each after `gapMs`), then reads until the server closes or
 * `waitMs` passes; `end` half-closes after the last part (a client that stopped sending).
 */
function raw(port: number, parts: ReadonlyArray<string | Buffer>, opts: { gapMs?: number; waitMs?: number; end?: boolean } = {}) {
  return new Promise<{ status: number; headers: string; body: string; closed: boolean; writeFailed: boolean }>((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true })
    let data = ""
    let closed = false
    let writeFailed = false
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => (data += chunk))
    socket.on("error", () => (writeFailed = true))
    const finish = () => {
      const headEnd = data.indexOf("\r\n\r\n")
      const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(data)?.[1] ?? 0)
      resolve({ status, headers: data.slice(0, headEnd), body: data.slice(headEnd + 4), closed, writeFailed })
    }
    const timer = setTimeout(() => {
      socket.destroy()
      finish()
    }, opts.waitMs ?? HANG_GUARD_MS)
    // The server's FIN: it closed its side (the client, half-open, then closes its own).
    socket.on("end", () => {
      closed = true
      socket.end()
    })
    socket.on("close", () => {
      closed = true
      clearTimeout(timer)
      finish()
    })
    socket.once("connect", async () => {
      for (const part of parts) {
        if (socket.destroyed) break
        socket.write(part)
        if (opts.gapMs !== undefined) await new Promise((r) => setTimeout(r, opts.gapMs))
      }
      if (opts.end === true && !socket.destroyed) socket.end()
    })
  })
}

const head = (path: string, extra: string) =>
  `POST ${path} HTTP/1.1\r\nHost: sim\r\nAccept: application/vnd.pay+json\r\nContent-Type: application/x-www-form-urlencoded\r\n${extra}\r\n`

function errorOf(body: string, status: number) {
  const parsed: unknown = JSON.parse(body)
  const schema = (status === 400 ? ValidationErrorResponse : ServerErrorResponse) as Schema.Schema<unknown, unknown, never>
  return Schema.decodeUnknownSync(schema, strict)(parsed) as Record<string, string>
}

async function saleStillWorks(url: string) {
  const reply = await signedRequest(sim!, "SALE", requests.sale(), { fetch: (r) => fetch(r), base: url })
  expect(reply.status).toBe(200)
}

// The server's header and request timeouts are real time (node's HTTP server checks them): the
// tests give them limits that a signed sale sent at once meets on a loaded machine, assert only
// that a 408 comes no sooner than its limit and before the defaults would have sent it, and wait
// for replies no longer than a hang guard (docs/testing.md).
describe("request limits over HTTP", { timeout: 2 * HANG_GUARD_MS }, () => {
  it("a declared Content-Length over the limit is a 413 answered before any body byte is sent", async () => {
    const { url, port, records } = await start()
    // 60 MB declared, not one byte of body written: the reply cannot have waited for it.
    const res = await raw(port, [head("/api/v2/sale/1001", "Content-Length: 62914560\r\n")])
    expect(res.status).toBe(413)
    expect(res.headers.toLowerCase()).toContain("connection: close")
    const body = errorOf(res.body, 413)
    expect(body).toMatchObject({ type: "error", "error-code": "request-too-large" })
    expect(body["error-message"]).toMatch(/^body: Content-Length 62914560 is over the simulator's limit of 65536 bytes/)
    expect(records.at(-1)).toMatchObject({ operation: "SALE", status: 413, errorCode: "request-too-large" })
    await saleStillWorks(url)
  })

  it("a chunked body is counted as it streams: 413 once it passes the limit, the rest never read", async () => {
    const { url, port } = await start({ bodyBytes: 1024 })
    const chunk = (text: string) => `${text.length.toString(16)}\r\n${text}\r\n`
    const parts = [head("/api/v2/sale/1001", "Transfer-Encoding: chunked\r\n"), ...Array.from({ length: 8 }, () => chunk("a=".padEnd(400, "x")))]
    const res = await raw(port, parts, { gapMs: 20 })
    expect(res.status).toBe(413)
    expect(errorOf(res.body, 413)["error-message"]).toMatch(/^body: [0-9]+\+ bytes is over the simulator's limit of 1024 bytes/)
    await saleStillWorks(url)
  })

  it("the limit applies to every route, test routes included", async () => {
    const { port } = await start({ bodyBytes: 100 })
    const res = await raw(port, [`POST /__sim/faults HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n`])
    expect(res.status).toBe(413)
  })

  it("a body cut short (the client stops before Content-Length) is a 400 malformed-request, not a 500", async () => {
    const { url, port, records } = await start()
    const res = await raw(port, [head("/api/v2/sale/1001", "Content-Length: 200\r\n") + "client_orderid=half"], { end: true })
    expect(res.status).toBe(400)
    expect(errorOf(res.body, 400)).toMatchObject({ type: "validation-error", "error-code": "malformed-request" })
    expect(records.at(-1)).toMatchObject({ status: 400, errorCode: "malformed-request" })
    await saleStillWorks(url)
  })

  it("a slow body is a 408 request-timeout after requestTimeoutMs", async () => {
    // 1 s for the headers: the sale sent at once afterwards has them parsed well within it.
    const { url, port } = await start({ headersTimeoutMs: 1_000, requestTimeoutMs: 1_500 })
    const started = performance.now()
    const res = await raw(port, [head("/api/v2/sale/1001", "Content-Length: 500\r\n"), "a=1", "&b=2"], { gapMs: 150 })
    const took = performance.now() - started
    expect(res.status).toBe(408)
    expect(errorOf(res.body, 408)).toMatchObject({ type: "error", "error-code": "request-timeout" })
    expect(res.closed).toBe(true)
    // Never before the limit (the clock starts before the connection), and by the limit given, not
    // the defaults' (10 s for headers, 30 s for the request).
    expect(took).toBeGreaterThanOrEqual(1_500)
    expect(took).toBeLessThan(DEFAULT_LIMITS.headersTimeoutMs)
    await saleStillWorks(url)
  })

  it("headers that never end are a 408 after headersTimeoutMs", async () => {
    const { port } = await start({ headersTimeoutMs: 200, requestTimeoutMs: 400 })
    const res = await raw(port, ["POST /api/v2/sale/1001 HTTP/1.1\r\nHost: sim\r\n", "X-Slow: 1\r\n"], { gapMs: 100 })
    expect(res.status).toBe(408)
    expect(errorOf(res.body, 408)["error-code"]).toBe("request-timeout")
  })

  it("malformed HTTP is a 400 malformed-request and oversized headers a 431, both JSON", async () => {
    const { url, port } = await start()
    const bad = await raw(port, ["POST /api/v2/sale/1001 HTTP/1.1\r\nHost: sim\r\nContent-Length: abc\r\n\r\n"])
    expect(bad.status).toBe(400)
    expect(errorOf(bad.body, 400)["error-code"]).toBe("malformed-request")
    const garbage = await raw(port, ["\x16\x03\x01 not http at all\r\n\r\n"])
    expect(garbage.status).toBe(400)
    const big = await raw(port, [`GET /__sim/clock HTTP/1.1\r\nHost: sim\r\nX-Big: ${"x".repeat(20_000)}\r\n\r\n`])
    expect(big.status).toBe(431)
    expect(errorOf(big.body, 431)["error-code"]).toBe("request-too-large")
    await saleStillWorks(url)
  })

  it("a body within the limit and a body of exactly the limit are served", async () => {
    const fields = requests.sale()
    const size = Buffer.byteLength(new URLSearchParams({ ...fields, control: "0".repeat(40) }).toString())
    const { url } = await start({ bodyBytes: size })
    await saleStillWorks(url)
  })

  it("limits are validated when the simulator is created, naming the limit", () => {
    expect(() => createSimulator({ limits: { bodyBytes: 0 } })).toThrow(RequestLimitsError)
    expect(() => createSimulator({ limits: { bodyBytes: 1.5 } })).toThrow(/limits\.bodyBytes: must be a positive integer/)
    expect(() => createSimulator({ limits: { headersTimeoutMs: 5_000, requestTimeoutMs: 1_000 } })).toThrow(/limits\.headersTimeoutMs: must not exceed requestTimeoutMs/)
    expect(DEFAULT_LIMITS.bodyBytes).toBe(65_536)
  })
})
