/**
 * The transport's openapi-fetch client (given a `Request` class that keeps URL and init, and the
 * body, headers and signal prepared: src/transport/fetch.ts) sends and reads as a plain openapi-fetch
 * client does: the same URL, method, headers and body on the wire, and every reply (2xx or not,
 * JSON or not, empty or not) read into the same `{ status, body, json }`. A plain openapi-fetch
 * client is the reference here.
 */
import type { paths } from "@paykit/contracts"
import fc from "fast-check"
import createClient from "openapi-fetch"
import { describe, expect, it } from "vitest"
import { makeTransports, rawReply, serializeForm, type RawReply, type SendResult } from "../../src/transport/fetch"

const FORM = "application/x-www-form-urlencoded"
const ACCEPT = "application/vnd.pay+json"

/** What the transport read before: openapi-fetch's POST (`parseAs: "text"`), then its result read this way. */
async function viaOpenApiFetch(baseUrl: string, fetch: (r: Request) => Promise<Response>, path: string, endpointId: string, form: string): Promise<RawReply> {
  const client = createClient<paths>({ baseUrl, fetch: fetch as typeof globalThis.fetch })
  const post = client.POST as unknown as (path: string, init: unknown) => Promise<{ data?: unknown; error?: unknown; response: Response }>
  const result = await post(path, {
    params: { path: { endpointId } },
    body: form,
    bodySerializer: (b: string) => b,
    headers: { "Content-Type": FORM, Accept: ACCEPT },
    parseAs: "text"
  })
  return rawReply(result)
}

interface Seen {
  readonly url: string
  readonly method: string
  readonly contentType: string | null
  readonly accept: string | null
  readonly authorization: string | null
  readonly body: string
}
const seenOf = async (request: Request): Promise<Seen> => ({
  url: request.url,
  method: request.method,
  contentType: request.headers.get("content-type"),
  accept: request.headers.get("accept"),
  authorization: request.headers.get("authorization"),
  body: await request.text()
})

const bodies = fc.oneof(
  fc.constant(""),
  fc.constant("null"),
  fc.constant("123"),
  fc.constant("\"a string\""),
  fc.constant("\"{\\\"type\\\":\\\"x\\\"}\""),
  fc.constant("not json"),
  fc.constant("{\"type\":\"async-response\",\"paynet-order-id\":12}"),
  fc.constant("[1,2]"),
  fc.json()
)

describe("the transport sends and reads as a plain openapi-fetch POST", () => {
  it("the same request on the wire (base URL with and without a trailing slash, with and without Authorization)", async () => {
    for (const baseUrl of ["http://gw.test", "http://gw.test/", "http://gw.test/prefix/"]) {
      for (const authorization of [undefined, "OAuth oauth_consumer_key=\"m\""]) {
        const fields = { client_orderid: "o 1", amount: "10.00", email: "a+b@c.d" }
        const form = serializeForm({ fields, control: "abc" })
        const seen: Array<Seen> = []
        const fetch = async (r: Request) => {
          seen.push(await seenOf(r))
          return new Response("{}", { status: 200 })
        }
        const client = createClient<paths>({ baseUrl, fetch: fetch as typeof globalThis.fetch })
        const post = client.POST as unknown as (path: string, init: unknown) => Promise<unknown>
        await post("/api/v2/sale/{endpointId}", {
          params: { path: { endpointId: "1001" } },
          body: form,
          bodySerializer: (b: string) => b,
          headers: { "Content-Type": FORM, Accept: ACCEPT, ...(authorization === undefined ? {} : { Authorization: authorization }) },
          parseAs: "text"
        })
        const { send } = makeTransports(baseUrl, fetch)
        await new Promise<SendResult>((resolve) =>
          send({ operation: "sale", path: "/api/v2/sale/{endpointId}", endpointId: "1001", body: fields, control: "abc", authorization, timeoutMs: 5000 }, resolve))
        expect(seen).toHaveLength(2)
        expect(seen[1]).toEqual(seen[0])
      }
    }
  })

  it("every reply is read into the same status, body and json flag", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(200, 201, 204, 299, 302, 400, 401, 403, 404, 408, 429, 500, 502, 503),
        bodies,
        fc.constantFrom("plain", "content-length-0", "json-type"),
        async (status, text, headerKind) => {
          const nullBody = status === 204
          const make = () => {
            const headers: Record<string, string> = headerKind === "json-type" ? { "Content-Type": "application/json" } : {}
            if (headerKind === "content-length-0") headers["Content-Length"] = "0"
            return new Response(nullBody ? null : (headerKind === "content-length-0" ? "" : text), { status, headers })
          }
          const fetch = (_: Request) => Promise.resolve(make())
          const expected = await viaOpenApiFetch("http://gw.test", fetch, "/api/v2/status/{endpointId}", "1", "a=1")
          const { send } = makeTransports("http://gw.test", fetch)
          const actual = await new Promise<SendResult>((resolve) =>
            send({ operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 5000 }, resolve))
          expect(actual).toEqual(expected)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("a body that fails while it is read is a TransportError (openapi-fetch's rejection)", async () => {
    const failing = () => new Response(new ReadableStream({ pull: (c) => c.error(Object.assign(new Error("reset"), { code: "ECONNRESET" })) }), { status: 200 })
    const { send } = makeTransports("http://gw.test", () => Promise.resolve(failing()))
    const result = await new Promise<SendResult>((resolve) =>
      send({ operation: "status", path: "/api/v2/status/{endpointId}", endpointId: "1", body: { a: "1" }, timeoutMs: 5000 }, resolve))
    expect(result).toMatchObject({ _tag: "TransportError", code: "ECONNRESET", mayHaveReachedGateway: true })
  })
})
