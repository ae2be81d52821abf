/**
 * The simulator's hot-path shortcuts (issue #14) against the plain computations they replace:
 * each must give the same result on any input, so a shortcut can never change a reply.
 */
import { createHash } from "node:crypto"
import { Socket, connect } from "node:net"
import { signControl } from "@paykit/signing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant } from "../src/index"
import { engineOf } from "../src/simulator/create"
import { SimError, errorBody, factsOf } from "../src/http/replies"
import { replyFacts } from "../src/http/request-log"
import { signedRequest } from "./helpers"
import { asyncReply, asyncReplyWithSerial } from "../src/operations/context"
import type { Order } from "../src/state/orders"
import { approvalCode } from "../src/engine/transaction-codes"

describe("card fingerprint from the hex digest", () => {
  it("is the first 16 bytes of SHA-256(salt, control key, PAN) as hex, as a Buffer digest gave it", async () => {
    const sim = createSimulator()
    const engine = engineOf(sim)!
    fc.assert(fc.property(fc.string({ maxLength: 24 }), fc.string({ maxLength: 40 }), (pan, key) => {
      const digest = createHash("sha256").update(`${engine.fingerprintSalt}\u0000${key}\u0000${pan}`).digest()
      expect(engine.fingerprint(pan, key)).toBe(digest.toString("hex", 0, 16))
    }), { numRuns: 2000 })
    await sim.close()
  })
})

describe("approval code in Number arithmetic", () => {
  /** The definition: (orderid × 1000 + tx) mod 10^6 in bigint, six digits. */
  const byBigint = (orderid: string, tx: number) => String((BigInt(orderid) * 1000n + BigInt(tx)) % 1_000_000n).padStart(6, "0")
  const digits = fc.stringMatching(/^[0-9]{1,30}$/)
  it("gives the bigint formula's code for any orderid of digits and any transaction index", () => {
    fc.assert(fc.property(digits, fc.oneof(fc.nat({ max: 2000 }), fc.nat({ max: 2 ** 52 })), (orderid, tx) => {
      expect(approvalCode(orderid, tx)).toBe(byBigint(orderid, tx))
    }), { numRuns: 5000 })
    expect(approvalCode("1000001")).toBe("001000")
    expect(approvalCode("1000999", 7)).toBe("999007")
  })
  it("leaves any other orderid or index to BigInt (same code, same throw)", () => {
    for (const [orderid, tx] of [[" 123 ", 0], ["0x1f", 2], ["", 5], ["1000001", -1], ["1000001", 2 ** 53 + 2]] as const) {
      expect(approvalCode(orderid, tx)).toBe(byBigint(orderid, tx))
    }
    expect(() => approvalCode("12a", 0)).toThrow(SyntaxError)
    expect(() => approvalCode("1000001", 1.5)).toThrow(RangeError)
  })
})

describe("a reply over HTTP goes out in one plain socket write", () => {
  it("head and body in one write (no writev), Content-Length exact, nothing after it; keep-alive goes on", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    const server = await sim.listen({ port: 0, host: "127.0.0.1" })
    const writes: string[] = []
    let writevs = 0
    const proto = Socket.prototype as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void }
    const { _write, _writev } = proto
    proto._write = function (this: Socket, chunk: unknown, ...rest: unknown[]) {
      writes.push(String(chunk))
      return _write.call(this, chunk, ...rest)
    }
    proto._writev = function (this: Socket, ...args: unknown[]) {
      writevs++
      return _writev.apply(this, args)
    }
    try {
      const { port } = new URL(server.url)
      const socket = connect(Number(port), "127.0.0.1")
      let received = ""
      let arrived: () => void = () => undefined
      socket.setEncoding("utf8")
      socket.on("data", (chunk: string) => {
        received += chunk
        arrived()
      })
      /** Resolves once `done()` holds, checked as each chunk arrives (no polling on a timer). */
      const waitFor = (done: () => boolean) =>
        new Promise<void>((resolve, reject) => {
          const check = () => {
            if (done()) resolve()
          }
          arrived = check
          socket.once("close", () => reject(new Error(`closed before a whole reply; got ${JSON.stringify(received)}`)))
          check()
        })
      const replies: string[] = []
      for (let i = 0; i < 2; i++) {
        const fields = requests.sale()
        const body = new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId }) }).toString()
        received = ""
        writes.length = 0
        socket.write(`POST /api/v2/sale/${testMerchant.endpointId} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/vnd.pay+json\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`)
        await waitFor(() => complete(received))
        replies.push(received)
      }
      socket.destroy()
      for (const raw of replies) {
        const [head, text] = [raw.slice(0, raw.indexOf("\r\n\r\n")), raw.slice(raw.indexOf("\r\n\r\n") + 4)]
        expect(head.split("\r\n")[0]).toBe("HTTP/1.1 200 OK")
        expect(Number(/content-length: (\d+)/i.exec(head)![1])).toBe(Buffer.byteLength(text))
        expect(JSON.parse(text)["type"]).toBe("async-response")
      }
      // The second reply, on the same kept-alive connection, was written as one chunk: head and body.
      expect(writes.filter((w) => w.startsWith("HTTP/1.1"))).toEqual([replies[1]])
      expect(writevs).toBe(0)
    } finally {
      proto._write = _write
      proto._writev = _writev
      await sim.close()
    }
  })
})

/** Whether a raw HTTP response holds its whole body (by Content-Length). */
function complete(raw: string): boolean {
  const end = raw.indexOf("\r\n\r\n")
  if (end < 0) return false
  const length = /content-length: (\d+)/i.exec(raw.slice(0, end))
  return length !== null && Buffer.byteLength(raw.slice(end + 4)) >= Number(length[1])
}

describe("the request log's reply facts, read from the reply object", () => {
  const value = fc.oneof(fc.string({ maxLength: 8 }), fc.constant(undefined), fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.constant({ a: "b" }), fc.constant(["x"]), fc.date())
  const name = fc.constantFrom("merchant-order-id", "error-code", "code", "type", "status", "serial-number")
  const object = fc.dictionary(name, value, { maxKeys: 6 })
  const anyBody = fc.oneof(object, fc.array(value, { maxLength: 3 }), value, object.map((o) => ({ ...o, toJSON: () => ({ "merchant-order-id": "from toJSON" }) })))

  it("are what replyFacts reads back from the JSON text, whenever they are taken", () => {
    fc.assert(fc.property(anyBody, (body) => {
      const text = JSON.stringify(body)
      if (typeof text !== "string") return
      const facts = factsOf(body, text)
      if (facts !== undefined) expect(facts).toEqual(replyFacts(text))
    }), { numRuns: 5000 })
  })

  it("are taken for the replies the hot path makes (an AsyncResponse, an error)", () => {
    const sale = { type: "async-response", status: "processing", "serial-number": "s", "merchant-order-id": "ord-1", "paynet-order-id": "1", "end-point-id": "2" }
    expect(factsOf(sale, JSON.stringify(sale))).toEqual({ clientOrderId: "ord-1" })
    const error = errorBody(new SimError("control-mismatch", "control: does not match", "ord-2"))
    expect(factsOf(error, JSON.stringify(error))).toEqual({ clientOrderId: "ord-2", errorCode: "control-mismatch" })
  })

  it("over HTTP the log shows a reply's client_orderid and error code as before", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    const server = await sim.listen({ port: 0, host: "127.0.0.1" })
    try {
      const fields = requests.sale()
      const signed = { ...fields, control: signControl("SALE", fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId }) }
      const post = (body: Record<string, string>) => fetch(`${server.url}/api/v2/sale/${testMerchant.endpointId}`, { method: "POST", headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(body) })
      expect((await post(signed)).status).toBe(200)
      expect((await post({ ...signed, control: "0".repeat(40) })).status).toBe(400)
      const [ok, refused] = sim.requests.entries().slice(-2)
      expect(ok).toMatchObject({ status: 200, clientOrderId: fields.client_orderid })
      expect(ok!.errorCode).toBeUndefined()
      expect(refused).toMatchObject({ status: 400, clientOrderId: fields.client_orderid, errorCode: "control-mismatch" })
    } finally {
      await sim.close()
    }
  })
})

describe("an AsyncResponse with its transaction's serial-number, built at once", () => {
  it("has the AsyncResponse's fields in the gateway's order, and asyncReply with that serial-number is the same text", () => {
    fc.assert(fc.property(fc.string(), fc.string(), fc.string(), fc.string(), fc.string(), (clientOrderId, orderid, endpointId, status, serial) => {
      const order = { clientOrderId, orderid, endpointId, status: "processing" } as unknown as Order
      const built = asyncReplyWithSerial(order, status, serial)
      const expected = `{"type":"async-response","status":${JSON.stringify(status)},"serial-number":${JSON.stringify(serial)},` +
        `"merchant-order-id":${JSON.stringify(clientOrderId)},"paynet-order-id":${JSON.stringify(orderid)},"end-point-id":${JSON.stringify(endpointId)}}`
      expect(JSON.stringify(built)).toBe(expected)
      expect(JSON.stringify(asyncReply(order, status, { "serial-number": serial }))).toBe(expected)
      // An extra field goes after them; without a serial-number in it one is drawn.
      const redirect = asyncReply(order, status, { "redirect-url": "u" })
      expect(Object.keys(redirect)).toEqual(["type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "end-point-id", "redirect-url"])
      expect(redirect["serial-number"]).toMatch(/^[0-9a-f-]{36}$/)
    }), { numRuns: 1000 })
  })
})
