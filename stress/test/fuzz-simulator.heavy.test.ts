/**
 * Fuzzing every simulator endpoint (all 28 operations) through `sim.fetch` with random and
 * malformed requests: fields missing, duplicated, replaced by hostile values or added; broken
 * percent-escapes and invalid UTF-8; wrong or missing Accept / Content-Type; random OAuth and other
 * headers; wrong methods and endpoint ids; sometimes correctly signed after mutation, so the
 * operation handlers themselves see hostile data. Properties: the handler never rejects, never
 * answers 500, every reply decodes by the contracts' Schemas, every 400 names its field, and no
 * card number is ever echoed. Seeded (PAYKIT_FUZZ_SEED), 500 cases per operation by default (PAYKIT_FUZZ_RUNS).
 */
import { operations, operationIds, operationSchemas, structFields, type OperationId } from "@paykit/contracts"
import { loadPrivateKey, signControl, signOAuth } from "@paykit/signing"
import { createSimulator, requestsByOperation, testMerchant } from "@paykit/testkit"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { acceptHeader, authorizationHeader, contentTypeHeader, extraName, headerValue, hostileString, rawFragment } from "../src/fuzz/values"
import { errorCodeOf, ORIGIN, send } from "../src/wire"

const SEED = Number(process.env["PAYKIT_FUZZ_SEED"] ?? 20261122)
const RUNS = Number(process.env["PAYKIT_FUZZ_RUNS"] ?? 500)
const sim = createSimulator({ processingDelayMs: 0 })
const privateKey = loadPrivateKey(testMerchant.privateKeyPem)
let cases = 0
/** Replies by operation and outcome (200 or error-code): shows the fuzz got past validation. */
const outcomes = new Map<OperationId, Map<string, number>>()

/**
 * Names a 400 may start with besides the operation's own fields and the names actually sent: the
 * headers, the path parameter, the HTTP method, `destination` (a payout's one-of-three group),
 * and `body` (a body that is not a form at all).
 */
const NON_FIELD_NAMES = new Set(["Accept", "Content-Type", "Authorization", "endpointId", "method", "destination", "body"])
const PAN_FIELDS = ["credit_card_number", "credit-card-number", "destination-card-no", "sending-card-number"]

const mutation = fc.oneof(
  fc.record({ kind: fc.constant("drop" as const), index: fc.nat() }),
  fc.record({ kind: fc.constant("set" as const), index: fc.nat(), value: hostileString }),
  fc.record({ kind: fc.constant("dup" as const), index: fc.nat(), value: hostileString }),
  fc.record({ kind: fc.constant("extra" as const), name: extraName, value: hostileString })
)

const plan = fc.record({
  mutations: fc.array(mutation, { maxLength: 3 }),
  raw: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(rawFragment, { minLength: 1, maxLength: 2 }) }),
  invalidUtf8: fc.boolean(),
  sign: fc.boolean(),
  accept: acceptHeader,
  contentType: contentTypeHeader,
  authorization: authorizationHeader,
  extraHeaders: fc.array(fc.tuple(fc.constantFrom("x-forwarded-for", "x-request-id", "cookie", "x-http-method-override", "content-encoding", "transfer-encoding-x"), headerValue), { maxLength: 2 }),
  method: fc.oneof({ weight: 12, arbitrary: fc.constant("POST") }, { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE", "PATCH") }),
  endpoint: fc.oneof({ weight: 10, arbitrary: fc.constant(String(testMerchant.endpointId)) }, { weight: 3, arbitrary: fc.constantFrom(String(testMerchant.endpointGroupId), "0", "7", "abc", "-1", "1001.0", "99999999999999999999", "", "%31001", "1001%00") })
})

type Plan = typeof plan extends fc.Arbitrary<infer T> ? T : never

/** Follow-up operations need an existing order or card ref; beforeAll makes one of each. */
const refs = { orderid: "", clientOrderId: "fuzz-base", cardrefid: "" }
function baseFields(op: OperationId): Record<string, string> {
  const over: Record<string, string> = {}
  const fields = requestsByOperation[op]()
  if ("orderid" in fields) over["orderid"] = refs.orderid
  if ("client_orderid" in fields && "orderid" in fields) over["client_orderid"] = refs.clientOrderId
  if ("client-order-id" in fields && "orderid" in fields) over["client-order-id"] = refs.clientOrderId
  if ("cardrefid" in fields) over["cardrefid"] = refs.cardrefid
  if ("source-card-ref-id" in fields) over["source-card-ref-id"] = refs.cardrefid
  return { ...fields, ...over }
}

async function signedSend(op: OperationId, fields: Record<string, string>) {
  const path = operations[op].path.replace("{endpointId}", String(testMerchant.endpointId))
  const control = signControl(op, fields, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
  return send(sim.fetch, path, new URLSearchParams({ ...fields, control }).toString(), { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" })
}

beforeAll(async () => {
  const sale = requestsByOperation.SALE({ client_orderid: refs.clientOrderId })
  const reply = await signedSend("SALE", sale)
  refs.orderid = String((reply.json as Record<string, unknown>)["paynet-order-id"])
  await sim.clock.advance(1)
  const ref = await signedSend("CARDREF", { login: testMerchant.login, client_orderid: refs.clientOrderId, orderid: refs.orderid })
  refs.cardrefid = String((ref.json as Record<string, unknown>)["card-ref-id"])
  expect(refs.orderid).toMatch(/^[0-9]+$/)
  expect(refs.cardrefid).not.toBe("undefined")
})

afterAll(async () => {
  console.log(`fuzz-simulator: ${cases} requests, seed ${SEED}`)
  for (const [op, byOutcome] of outcomes) console.log(`  ${op}: ${[...byOutcome].map(([k, v]) => `${k} ${v}`).join(", ")}`)
  await sim.close()
})

function build(op: OperationId, p: Plan) {
  const pairs: Array<[string, string]> = Object.entries(baseFields(op))
  for (const m of p.mutations) {
    if (m.kind === "extra") pairs.push([m.name, m.value])
    else if (pairs.length > 0) {
      const i = m.index % pairs.length
      if (m.kind === "drop") pairs.splice(i, 1)
      else if (m.kind === "set") pairs[i] = [pairs[i]![0], m.value]
      else pairs.push([pairs[i]![0], m.value])
    }
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of p.extraHeaders) headers[name] = value
  if (p.accept !== undefined) headers["accept"] = p.accept
  if (p.contentType !== undefined) headers["content-type"] = p.contentType
  if (p.authorization !== undefined) headers["authorization"] = p.authorization
  const path = operations[op].path.replace("{endpointId}", p.endpoint)
  const auth = operations[op].auth
  if (p.sign) {
    // Signed after mutation: the request then passes authentication and reaches the handler.
    try {
      if (auth.scheme === "control") {
        pairs.push(["control", signControl(op, Object.fromEntries(pairs), { key: testMerchant.controlKey, endpointId: p.endpoint })])
      } else {
        const common = { url: ORIGIN + path, params: pairs, consumerKey: testMerchant.login }
        headers["authorization"] = (auth.scheme === "oauth-hmac-sha1"
          ? signOAuth({ ...common, signatureMethod: "HMAC-SHA1", consumerSecret: testMerchant.controlKey })
          : signOAuth({ ...common, signatureMethod: "RSA-SHA256", privateKey })).authorizationHeader
      }
    } catch {
      // Unsignable input (a bad amount, an oauth_* name): send it unsigned.
    }
  }
  let body: string | Uint8Array = [new URLSearchParams(pairs).toString(), ...p.raw].join("&")
  if (p.invalidUtf8) body = Buffer.concat([Buffer.from(body), Buffer.from([0x26, 0x6e, 0x61, 0x6d, 0x65, 0x3d, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80])])
  return { pairs, headers, path, body }
}

describe("fuzz: every simulator operation", () => {
  it("covers all 28 operations (the interface's 26, recurring process and update)", () => {
    expect(operationIds).toHaveLength(28)
  })

  for (const [n, op] of operationIds.entries()) {
    const fields = new Set(Object.keys(structFields<object>(operationSchemas[op].request)))
    const decodeOk = Schema.decodeUnknownEither(operationSchemas[op].response as unknown as Schema.Schema<unknown>)

    it(`${op}: no 500, no crash, typed replies, every 400 names its field (seed ${SEED + n})`, { timeout: 60_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(plan, async (p) => {
          cases++
          const { pairs, headers, path, body } = build(op, p)
          const reply = await send(sim.fetch, path, body, headers, p.method)
          const seen = errorCodeOf(reply)
          const outcome = reply.status === 200 ? "200" : seen.ok ? seen.code : `?${reply.status}`
          const byOutcome = outcomes.get(op) ?? new Map<string, number>()
          outcomes.set(op, byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1))
          expect(reply.status, reply.text.slice(0, 300)).not.toBe(500)
          expect([200, 400]).toContain(reply.status)
          expect(reply.contentType).toBe("application/vnd.pay+json")
          if (reply.status === 200) {
            expect(Either.isRight(decodeOk(reply.json)), reply.text.slice(0, 300)).toBe(true)
          } else {
            const e = errorCodeOf(reply)
            expect(e.ok, reply.text.slice(0, 300)).toBe(true)
            if (!e.ok) return
            // The names the simulator saw: the body as it parses it (raw fragments included).
            const text = typeof body === "string" ? body : new TextDecoder().decode(body)
            const sent = [...new URLSearchParams(text).keys()]
            const names = [...fields, ...sent, ...NON_FIELD_NAMES]
            expect(names.some((name) => e.message.startsWith(`${name}:`)), `${e.code}: ${e.message.slice(0, 200)}`).toBe(true)
          }
          for (const [name, value] of pairs) {
            if (PAN_FIELDS.includes(name) && /^[0-9]{12,19}$/.test(value) && !pairs.some(([other, v]) => other !== name && v === value)) {
              expect(reply.text.includes(value), `${name} echoed`).toBe(false)
            }
          }
        }),
        { seed: SEED + n, numRuns: RUNS }
      )
      // Some requests got past Accept/Content-Type/Schema validation into authentication or the handler.
      const reached = [...(outcomes.get(op)?.keys() ?? [])].filter((c) => !["invalid-field", "not-acceptable", "unsupported-media-type"].includes(c))
      expect(reached.length, JSON.stringify([...(outcomes.get(op) ?? [])])).toBeGreaterThan(0)
    })
  }
})
