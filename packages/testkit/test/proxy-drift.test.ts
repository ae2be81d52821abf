/**
 * The checking proxy against an upstream that drifts from the spec (a small fake gateway on
 * loopback): a missing field, an extra field, a wrong type and a 403 are each reported, and no byte
 * of a request or a reply is altered in flight, clean or not.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requests, startProxy, type CheckingProxy, type ExchangeRecord } from "../src/index"
import { buildRequest } from "./helpers"

const PAY_JSON = "application/vnd.pay+json"

/** What the fake gateway answers, by the client_orderid's first part. */
const replies: Record<string, { status: number; body: string }> = {
  clean: { status: 200, body: JSON.stringify({ type: "async-response", status: "processing", "serial-number": "sn-1", "merchant-order-id": "clean-1", "paynet-order-id": "1000001" }) },
  missing: { status: 200, body: JSON.stringify({ type: "async-response", status: "processing", "merchant-order-id": "missing-1" }) },
  extra: { status: 200, body: JSON.stringify({ type: "async-response", status: "processing", "serial-number": "sn-2", "merchant-order-id": "extra-1", "risk-score": "12" }) },
  wrongtype: { status: 200, body: JSON.stringify({ type: "async-response", status: "processing", "serial-number": 12345, "merchant-order-id": "wrongtype-1" }) },
  echo: { status: 200, body: JSON.stringify({ type: "async-response", status: "processing", "serial-number": "sn-4", "merchant-order-id": "someone-else" }) },
  forbidden: { status: 403, body: JSON.stringify({ type: "validation-error", "serial-number": "sn-3", "error-message": "signature refused", "error-code": "control-mismatch" }) }
}

interface Seen {
  readonly rawHeaders: Array<string>
  readonly body: Buffer
  readonly url: string
}

let fake: Server
let fakeUrl: string
const seen: Array<Seen> = []
let proxy: CheckingProxy

beforeAll(async () => {
  fake = createServer((req: IncomingMessage, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const body = Buffer.concat(chunks)
      seen.push({ rawHeaders: req.rawHeaders, body, url: req.url ?? "" })
      const order = new URLSearchParams(body.toString()).get("client_orderid") ?? ""
      const reply = replies[order.split("-")[0]!] ?? replies["clean"]!
      res.writeHead(reply.status, { "content-type": PAY_JSON, "x-gateway": "fake" }).end(reply.body)
    })
  })
  await new Promise<void>((resolve) => fake.listen(0, "127.0.0.1", resolve))
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`
  proxy = await startProxy({ upstream: fakeUrl })
})

afterAll(async () => {
  await proxy.close()
  await new Promise<void>((resolve) => fake.close(() => resolve()))
})

/** Sends a signed sale with this client_orderid through the proxy; what the client sent and got, and what the fake saw. */
async function sale(clientOrderId: string) {
  const request = buildRequest(undefined as never, "SALE", requests.sale({ client_orderid: clientOrderId }), { base: proxy.url })
  const sentBody = Buffer.from(await request.clone().arrayBuffer())
  const before = seen.length
  const response = await fetch(request)
  const got = Buffer.from(await response.arrayBuffer())
  expect(seen.length).toBe(before + 1)
  const exchange = proxy.exchanges().at(-1) as ExchangeRecord
  return { response, got, sentBody, upstreamSaw: seen.at(-1)!, exchange }
}

describe("the checking proxy against a drifting upstream", () => {
  it("passes a clean exchange on byte for byte and reports nothing", async () => {
    const { response, got, sentBody, upstreamSaw, exchange } = await sale("clean-1")
    expect(upstreamSaw.body.equals(sentBody)).toBe(true)
    expect(upstreamSaw.url).toBe(new URL(buildRequest(undefined as never, "SALE", {}, { base: proxy.url }).url).pathname)
    // The headers the upstream got are the client's own lines, Host included.
    expect(upstreamSaw.rawHeaders.find((_, i, all) => i % 2 === 1 && all[i - 1]!.toLowerCase() === "host")).toBe(new URL(proxy.url).host)
    expect(got.equals(Buffer.from(replies["clean"]!.body))).toBe(true)
    expect(response.status).toBe(200)
    expect(response.headers.get("x-gateway")).toBe("fake")
    expect(exchange).toMatchObject({ operation: "SALE", status: 200, via: "forwarded", mismatches: [] })
  })

  it("reports a missing field", async () => {
    const { got, exchange } = await sale("missing-1")
    expect(got.equals(Buffer.from(replies["missing"]!.body))).toBe(true)
    expect(exchange.mismatches).toEqual([{ side: "reply", kind: "missing-field", field: "serial-number", rule: "is missing" }])
  })

  it("reports an extra field", async () => {
    const { got, exchange } = await sale("extra-1")
    expect(got.equals(Buffer.from(replies["extra"]!.body))).toBe(true)
    expect(exchange.mismatches).toEqual([{ side: "reply", kind: "extra-field", field: "risk-score", rule: "not in the spec" }])
  })

  it("reports a wrong type, without the value", async () => {
    const { got, exchange } = await sale("wrongtype-1")
    expect(got.equals(Buffer.from(replies["wrongtype"]!.body))).toBe(true)
    expect(exchange.mismatches).toEqual([{ side: "reply", kind: "wrong-type", field: "serial-number", rule: expect.stringContaining("Expected string") }])
    expect(JSON.stringify(exchange)).not.toContain("12345")
  })

  it("reports a 403 (the spec answers a refused signature with a 400) and passes it on unchanged", async () => {
    const { response, got, exchange } = await sale("forbidden-1")
    expect(response.status).toBe(403)
    expect(got.equals(Buffer.from(replies["forbidden"]!.body))).toBe(true)
    expect(exchange.mismatches).toEqual([expect.objectContaining({ side: "reply", kind: "status", field: "status" })])
  })

  it("reports a merchant-order-id that does not echo the request's client_orderid", async () => {
    const { exchange } = await sale("echo-1")
    expect(exchange.mismatches).toEqual([{ side: "reply", kind: "rule", field: "merchant-order-id", rule: "must echo the request's client_orderid" }])
  })

  it("reports a request that breaks the spec, and still forwards it unchanged", async () => {
    const request = buildRequest(undefined as never, "SALE", requests.sale({ client_orderid: "clean-2", email: "not-an-email", credit_card_number: "4111111111111112" }), { base: proxy.url })
    const sent = Buffer.from(await request.clone().arrayBuffer())
    const response = await fetch(request)
    await response.arrayBuffer()
    expect(seen.at(-1)!.body.equals(sent)).toBe(true)
    const exchange = proxy.exchanges().at(-1)!
    expect(exchange.mismatches.map((m) => `${m.side} ${m.field} ${m.kind}`)).toEqual(expect.arrayContaining(["request email rule", "request credit_card_number rule"]))
    // Never a card number, whole or in part beyond BIN and last four, in what the proxy shows.
    expect(JSON.stringify(proxy.exchanges())).not.toContain("4111111111111112")
  })

  it("shows the mismatches on its dashboard and as JSON", async () => {
    const page = await (await fetch(`${proxy.url}/__proxy/ui`)).text()
    expect(page).toContain("risk-score")
    expect(page).toContain("extra-field")
    expect(page).toContain("HTTP 403 is not in the spec")
    const json = (await (await fetch(`${proxy.url}/__proxy/exchanges`)).json()) as { exchanges: Array<ExchangeRecord> }
    expect(json.exchanges.filter((x) => x.mismatches.length > 0).length).toBeGreaterThanOrEqual(5)
  })
})
