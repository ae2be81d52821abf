/**
 * `pnpm --filter @paykit/testkit spec:examples`: runs the simulator in process, drives every
 * operation of the spec on its happy path (plus a refusal, a gateway failure and the callbacks of a
 * sale, a return and a chargeback) and writes what went over the wire to
 * `spec/examples/simulator.json`. `pnpm --filter @paykit/contracts spec:refresh` then puts them into
 * `spec/openapi.yaml` as the `examples` of each request and reply schema.
 *
 * The run is deterministic (fixed clock, fixed order ids, seeded serial numbers and card
 * references), so a re-run after a spec change only changes what the change changes. Requests are
 * signed for real (control digests in cents, decision 2); OAuth operations carry their signature in
 * the Authorization header, so their body examples have none.
 */
import nodeCrypto from "node:crypto"
import { writeFileSync, mkdirSync } from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import { fileURLToPath } from "node:url"

// Serial numbers and card references come from node:crypto; seed them before the simulator loads.
let serial = 0
let bytes = 0
;(nodeCrypto as { randomUUID: () => string }).randomUUID = () => `00000000-0000-0000-0000-${(0x2d9b22a + ++serial).toString(16).padStart(12, "0")}`
;(nodeCrypto as unknown as { randomBytes: (n: number) => Buffer }).randomBytes = (n: number) => {
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i++) out[i] = (++bytes * 37 + i * 11) & 0xff
  return out
}
syncBuiltinESMExports()

const { operationIds, operations } = await import("@paykit/contracts")
type OperationId = (typeof operationIds)[number]
const { loadPrivateKey, signControl, signOAuth } = await import("@paykit/signing")
const { createSimulator, requests, requestsByOperation, testMerchant } = await import("../src/index")

const BASE = "http://127.0.0.1:4010"
const outPath = fileURLToPath(new URL("../../../spec/examples/simulator.json", import.meta.url))
const privateKey = loadPrivateKey(testMerchant.privateKeyPem)
const callbacks: Array<Record<string, string>> = []
const sim = createSimulator({
  baseUrl: BASE,
  startTime: Date.UTC(2026, 10, 2, 9, 30),
  callbackFetch: (async (input: RequestInfo | URL) => {
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
    callbacks.push(Object.fromEntries(url.searchParams))
    return new Response("ok")
  }) as typeof fetch
})

let orderNo = 4097760
const nextId = (prefix: string) => `${prefix}${++orderNo}`
const CALLBACK = "https://merchant.example/paykit/callback"

interface Exchange {
  readonly operationId: string
  readonly request: Record<string, string>
  readonly status: number
  readonly reply: Record<string, unknown>
}

/** Signs and sends one request; returns the fields as sent (with control) and the reply. */
async function send(op: OperationId, fields: Record<string, string>): Promise<Exchange> {
  const spec = operations[op]
  const url = `${BASE}${spec.path.replace("{endpointId}", String(testMerchant.endpointId))}`
  const body: Record<string, string> = { ...fields }
  const headers: Record<string, string> = { accept: spec.accept, "content-type": "application/x-www-form-urlencoded" }
  if (spec.auth.scheme === "control") {
    body["control"] = signControl(op, body, { key: testMerchant.controlKey, endpointId: testMerchant.endpointId })
  } else {
    const params = Object.entries(body)
    const signed = signOAuth(
      spec.auth.scheme === "oauth-hmac-sha1"
        ? { url, params, consumerKey: testMerchant.login, signatureMethod: "HMAC-SHA1", consumerSecret: testMerchant.controlKey }
        : { url, params, consumerKey: testMerchant.login, signatureMethod: "RSA-SHA256", privateKey },
      { timestamp: Math.floor(Date.now() / 1000) }
    )
    headers["authorization"] = signed.authorizationHeader
  }
  const response = await sim.fetch(new Request(url, { method: "POST", headers, body: new URLSearchParams(body).toString() }))
  return { operationId: op, request: body, status: response.status, reply: (await response.json()) as Record<string, unknown> }
}

const ok = (x: Exchange): Exchange => {
  if (x.status !== 200) throw new Error(`${x.operationId}: HTTP ${x.status} ${JSON.stringify(x.reply)}`)
  return x
}

/** A finished order of `kind`, its ids. */
async function finished(kind: "SALE" | "PREAUTH" | "THREEDS" | "CHECK"): Promise<{ orderid: string; client_orderid: string }> {
  const client_orderid = nextId(kind === "CHECK" ? "payout-" : "inv")
  const fields = kind === "CHECK"
    ? requests.payoutCheck({ client_orderid })
    : (kind === "PREAUTH" ? requests.preauth : requests.sale)({ client_orderid, ...(kind === "THREEDS" ? { credit_card_number: "4000000000003220" } : {}) })
  const reply = ok(await send(kind === "CHECK" ? "PAYOUT_V4_CHECK" : kind === "PREAUTH" ? "PREAUTH" : "SALE", fields))
  if (kind !== "THREEDS") await sim.clock.advance(2000)
  return { orderid: String(reply.reply["paynet-order-id"]), client_orderid }
}

async function cardRef(): Promise<string> {
  const ids = await finished("SALE")
  return String(ok(await send("CARDREF", requests.createCardRef(ids))).reply["card-ref-id"])
}

/** A recurring payment created without a schedule (charged by process-recurring-payment), its id. */
async function subscription(): Promise<string> {
  const created = ok(await send("CREATE_RP_V4", requests.createRecurringPayment({ "client-orderid": nextId("sub-") })))
  return String(created.reply["recurring-payment-id"])
}

/** The happy-path request of each operation, creating what it refers to. */
async function happy(op: OperationId): Promise<Record<string, string>> {
  const fresh = { client_orderid: nextId("inv") }
  switch (op) {
    case "SALE": return requests.sale({ ...fresh, server_callback_url: CALLBACK })
    case "PREAUTH": return requests.preauth({ ...fresh, amount: "25.00" })
    case "CAPTURE": return requests.capture({ ...(await finished("PREAUTH")), amount: "6.00", currency: "USD" })
    case "VOID": return requests.void(await finished("SALE"))
    case "RETURN": return requests.return({ ...(await finished("SALE")), amount: "4.00", currency: "USD", comment: "Partial refund" })
    case "STATUS": return requests.status(await finished("SALE"))
    case "CARDREF": return requests.createCardRef(await finished("SALE"))
    case "CARDREF_V4": return requests.createCardRefV4(await finished("SALE"))
    case "CARDINFO": return requests.getCardInfo({ cardrefid: await cardRef() })
    case "REBILL": return requests.makeRebill({ ...fresh, cardrefid: await cardRef() })
    case "TRANSFER_BY_REF_V4": return requests.transferByRef({ "client-order-id": nextId("transfer-"), "source-card-ref-id": await cardRef() })
    case "PAYOUT_V4_PAY": return requests.payoutPay(await finished("CHECK"))
    case "PAYOUT":
    case "PAYOUT_V4_CHECK": return requestsByOperation[op]({ client_orderid: nextId("payout-") })
    case "CREATE_RP_V4": return requests.createRecurringPayment({ "client-orderid": nextId("sub-"), period: "month", interval: "1" })
    case "PROCESS_RP_V4": return requests.processRecurringPayment({ "client-orderid": nextId("charge-"), "recurring-payment-id": await subscription(), amount: "9.99" })
    case "UPDATE_RP_V4": return requests.updateRecurringPayment({ "client-orderid": nextId("sub-"), "recurring-payment-id": await subscription(), amount: "12.50" })
    case "TDS_UPLOAD_METHOD_URL_RESULT":
    case "TDS_UPLOAD_PARES_RESULT": {
      const ids = await finished("THREEDS")
      return requestsByOperation[op]({ orderid: ids.orderid, "client-order-id": ids.client_orderid })
    }
    case "TDS_UPLOAD_CRES_RESULT": {
      const ids = await finished("THREEDS")
      const three = { orderid: ids.orderid, "client-order-id": ids.client_orderid }
      ok(await send("TDS_UPLOAD_METHOD_URL_RESULT", requests.uploadMethodUrlResult(three)))
      return requests.uploadCresResult(three)
    }
    default: {
      // An operation added later: its builder's defaults, with a fresh merchant order id.
      const build = (requestsByOperation as Record<string, (o?: Record<string, string>) => Record<string, string>>)[op]
      if (build === undefined) throw new Error(`${op}: no request builder in @paykit/testkit`)
      const base = build()
      const key = ["client_orderid", "client-orderid", "client-order-id"].find((k) => k in base)
      return build(key === undefined ? {} : { [key]: nextId("inv") })
    }
  }
}

const exchanges: Record<string, Exchange> = {}
const skipped: Array<string> = []
for (const op of operationIds) {
  try {
    exchanges[op] = ok(await send(op, await happy(op)))
  } catch (error) {
    skipped.push(`${op}: ${(error as Error).message}`)
  }
}

// A 3DS sale: processing with redirect-url, and its status while the challenge is pending (html).
const threeds = ok(await send("SALE", requests.sale({ client_orderid: nextId("inv"), credit_card_number: "4000000000003220" })))
const pending = ok(await send("STATUS", requests.status({ orderid: String(threeds.reply["paynet-order-id"]), client_orderid: threeds.request["client_orderid"]! })))

// A refusal of the Accept header (what a generated client that drops the header gets).
const noAccept = await sim.fetch(new Request(`${BASE}/api/v2/sale/${testMerchant.endpointId}`, {
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(requests.sale({ client_orderid: nextId("inv") })).toString()
}))
const notAcceptable = { status: noAccept.status, reply: (await noAccept.json()) as Record<string, unknown> }

// A refusal: capturing more than the preauth authorized.
const pre = await finished("PREAUTH")
const refused = await send("CAPTURE", requests.capture({ ...pre, amount: "99.00", currency: "USD" }))

// A gateway failure (the simulator's fault injection).
sim.faults.add({ operation: "SALE", kind: "http-500", count: 1 })
const failed = await send("SALE", requests.sale({ client_orderid: nextId("inv") }))
sim.faults.clear()

// Callbacks: a sale, a partial return (type reversal) and a chargeback (decision 17).
const charged = ok(await send("SALE", requests.sale({ client_orderid: nextId("inv"), amount: "30.00", server_callback_url: CALLBACK })))
const chargedIds = { orderid: String(charged.reply["paynet-order-id"]), client_orderid: charged.request["client_orderid"]! }
await sim.clock.advance(2000)
ok(await send("RETURN", requests.return({ ...chargedIds, amount: "5.00", currency: "USD", server_callback_url: CALLBACK })))
await sim.clock.advance(2000)
await sim.clock.advance(25 * 60 * 60 * 1000)
const cb = await sim.fetch(new Request(`${BASE}/__sim/orders/${chargedIds.orderid}/chargeback`, { method: "POST", body: JSON.stringify({ amount: "10.00" }) }))
if (!cb.ok) throw new Error(`chargeback route: HTTP ${cb.status} ${await cb.text()}`)
await sim.clock.advance(2000)
const afterChargeback = ok(await send("STATUS", requests.status(chargedIds)))
await sim.close()

const pick = (type: string) => callbacks.find((c) => c["type"] === type)
const out = {
  note: "Captured from @paykit/testkit's simulator by packages/testkit/scripts/spec-examples.ts; do not edit by hand.",
  operations: Object.fromEntries(Object.entries(exchanges).map(([op, x]) => [op, { request: x.request, reply: x.reply }])),
  more: {
    "SALE (3DS challenge)": { request: threeds.request, reply: threeds.reply },
    "STATUS (3DS challenge pending)": { request: pending.request, reply: pending.reply },
    "STATUS (after a partial return and a chargeback)": { request: afterChargeback.request, reply: afterChargeback.reply }
  },
  notAcceptable,
  validationError: { status: refused.status, reply: refused.reply },
  serverError: { status: failed.status, reply: failed.reply },
  callbacks: [pick("sale"), pick("reversal"), pick("chargeback")].filter((c) => c !== undefined),
  skipped
}
mkdirSync(fileURLToPath(new URL("../../../spec/examples/", import.meta.url)), { recursive: true })
writeFileSync(outPath, JSON.stringify(out, null, 2) + "\n")
console.log(`spec/examples/simulator.json: ${Object.keys(exchanges).length} operations, ${out.callbacks.length} callbacks${skipped.length ? `; skipped:\n  ${skipped.join("\n  ")}` : ""}`)
if (out.callbacks.length !== 3 || refused.status !== 400 || failed.status !== 500 || notAcceptable.reply["error-code"] !== "not-acceptable") {
  console.error("expected a sale, reversal and chargeback callback, a 400 and a 500")
  process.exit(1)
}
