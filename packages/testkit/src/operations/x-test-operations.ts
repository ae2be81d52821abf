/**
 * TEST-ONLY operations beyond the spec: made-up routes no gateway has, under `/api/v2/x-test/`, for
 * the client's signed escape hatch (`request()`, docs/decisions.md#24-a-signed-escape-hatch). They
 * let a test send an operation outside the spec and see it signed, processed, its reply lost, and
 * the order found again by `client_orderid`, as for any operation of the spec.
 *
 * - `POST /api/v2/x-test/loyalty-credit/{endpointId}` credits `amount` `currency` to
 *   `loyalty_account` as a new order named by `client_orderid`: a money-moving transaction of type
 *   `loyalty-credit` that `status` shows (processing, then approved after the processing delay).
 *   Control: SHA-1 of endpointId + client_orderid + amount in minor units + the merchant control
 *   key. The same request again under its `client_orderid` gets the same order (never a second
 *   credit); a different one `client-orderid-conflict`.
 * - `POST /api/v2/x-test/loyalty-balance/{endpointId}` reads the approved credits of
 *   `loyalty_account` in `currency` (`balance`, `credits`). Control: SHA-1 of login +
 *   loyalty_account + currency + the merchant control key.
 *
 * Fault rules for every operation (`operation: "*"`) act on them as on the spec's operations
 * (`http-500`, `reset-before`, and `reset-after`: processed, reply lost). Registered in `router.ts`;
 * any other path under the prefix is the 404 `unknown-path` of every unknown path.
 *
 * @packageDocumentation
 */
import type { OperationId } from "@paykit/contracts"
import { InvalidAmountError, verifyControl, type ControlScheme } from "@paykit/signing"
import type { Engine } from "../engine/engine"
import type { Merchant } from "../auth/merchant"
import { parseEndpointId } from "../http/endpoint-id"
import { ConnectionReset } from "../rules/faults"
import { asyncReply, newOrder, replayIfRepeated, type OpContext, type Reply } from "./context"
import { SimError, errorReply, json, serialNumber, type SimReply, type SimRequest } from "../http/replies"
import { checkAccept, checkContentType, parseFields, type Fields } from "../http/validation"

/** Where the test-only operations live. */
export const X_TEST_PREFIX = "/api/v2/x-test/"

// The name orders, faults and the request log know the credit by (no operation id of the spec).
const LOYALTY_CREDIT = "X_TEST_LOYALTY_CREDIT"
const LOYALTY_BALANCE = "X_TEST_LOYALTY_BALANCE"

const CREDIT_CONTROL: ControlScheme = { code: "x-test", fields: ["endpointId", "client_orderid", "amount"] }
const BALANCE_CONTROL: ControlScheme = { code: "x-test", fields: ["login", "loyalty_account", "currency"] }

interface XTestOperation {
  readonly name: string
  readonly run: (engine: Engine, fields: Fields, endpointId: string) => Reply
}

const OPERATIONS: ReadonlyMap<string, XTestOperation> = new Map([
  ["loyalty-credit", { name: LOYALTY_CREDIT, run: loyaltyCredit }],
  ["loyalty-balance", { name: LOYALTY_BALANCE, run: loyaltyBalance }]
])

/**
 * Answers a test-only operation; `undefined` when `path` names none (the caller answers 404).
 * Throws {@link ConnectionReset} when a fault drops the connection.
 */
export async function handleXTestOperation(engine: Engine, request: SimRequest, path: string): Promise<SimReply | undefined> {
  const rest = path.slice(X_TEST_PREFIX.length)
  const slash = rest.indexOf("/")
  const operation = slash < 0 ? undefined : OPERATIONS.get(rest.slice(0, slash))
  const endpointText = rest.slice(slash + 1)
  if (operation === undefined || endpointText.includes("/")) return undefined
  engine.tick()
  const fault = (kind: "http-500" | "reset-before" | "reset-after") => !engine.faults.empty && engine.faults.take(operation.name, kind) !== undefined
  try {
    if (fault("http-500")) throw new SimError("internal-error", "simulated gateway failure; the request was not processed")
    if (fault("reset-before")) throw new ConnectionReset()
    if (request.method !== "POST") throw new SimError("invalid-field", `method: ${operation.name} takes POST`)
    checkAccept(request.header("accept"))
    checkContentType(request.header("content-type"))
    const fields = parseFields(await request.text())
    const endpointId = parseEndpointId(endpointText)
    if (endpointId === undefined) throw new SimError("invalid-field", "endpointId: must be an integer from 1 to 2^63-1, written without sign or leading zero")
    // Closed while this request awaited its body: it must not change state.
    if (engine.closed) throw new ConnectionReset()
    const reply = json(operation.run(engine, fields, endpointId))
    // The credit happened; only the reply is lost.
    if (fault("reset-after")) throw new ConnectionReset()
    return reply
  } catch (error) {
    if (error instanceof SimError) return errorReply(error)
    throw error
  }
}

function required(fields: Fields, name: string, clientOrderId?: string): string {
  const value = fields[name]
  if (value === undefined || value === "") throw new SimError("invalid-field", `${name}: required`, clientOrderId)
  return value
}

function checkDigest(scheme: ControlScheme, fields: Fields, endpointId: string, merchant: Merchant, clientOrderId?: string): void {
  let ok: boolean
  try {
    ok = verifyControl(scheme, fields, fields["control"], merchant.controlKey, { endpointId, minorUnits: merchant.minorUnits }).ok
  } catch (error) {
    if (error instanceof InvalidAmountError) throw new SimError("invalid-amount", `${error.field}: ${error.message}`, clientOrderId)
    ok = false
  }
  if (!ok) throw new SimError("control-mismatch", "control: does not match the digest of this request", clientOrderId)
}

/** `loyalty-credit`: a new order crediting the loyalty account, deduplicated by `client_orderid`. */
function loyaltyCredit(engine: Engine, fields: Fields, endpointId: string): Reply {
  const clientOrderId = required(fields, "client_orderid")
  const amountText = required(fields, "amount", clientOrderId)
  const currency = required(fields, "currency", clientOrderId)
  const account = required(fields, "loyalty_account", clientOrderId)
  // The control digests the endpoint id: the endpoint names the merchant (as the spec's C2 and C6).
  const merchant = engine.merchantByEndpoint(endpointId)
  if (merchant === undefined) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint or group of a known merchant`, clientOrderId)
  checkDigest(CREDIT_CONTROL, fields, endpointId, merchant, clientOrderId)
  const amount = engine.minor(amountText, currency)
  if (amount <= 0n) throw new SimError("invalid-amount", "amount: must be above zero", clientOrderId)
  // The order records which operation made it; this one is no operation id of the spec.
  const ctx: OpContext = { engine, operationId: LOYALTY_CREDIT as OperationId, merchant, endpointId, fields }
  const fingerprint = creditFingerprint(amount, currency, account)
  const repeated = replayIfRepeated(ctx, clientOrderId, fingerprint)
  if (repeated !== undefined) return repeated
  // Money leaves the merchant for the customer's account: a payout's ledger.
  const order = newOrder(ctx, { kind: "payout", clientOrderId, currency, amount, amountText, fingerprint, outcome: "approved" })
  const tx = engine.accept(order, "payout", "loyalty-credit", amount)
  engine.scheduleFinal(order, tx, "approved")
  order.reply = asyncReply(order, "processing", { "serial-number": tx.serialNumber })
  return order.reply
}

const creditFingerprint = (amount: bigint, currency: string, account: string) => `loyalty-credit|${amount}|${currency}|${account}`

/** `loyalty-balance`: the approved credits of one account in one currency. */
function loyaltyBalance(engine: Engine, fields: Fields, endpointId: string): Reply {
  const login = required(fields, "login")
  const account = required(fields, "loyalty_account")
  const currency = required(fields, "currency")
  const merchant = engine.merchantByLogin(login)
  if (merchant === undefined) throw new SimError("unknown-merchant", "login: unknown merchant")
  if (!merchant.endpoints.has(endpointId)) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint of this merchant`)
  checkDigest(BALANCE_CONTROL, fields, endpointId, merchant)
  let balance = 0n
  let credits = 0
  for (const order of engine.store.all()) {
    if (order.login !== merchant.login || order.operation !== LOYALTY_CREDIT || order.status !== "approved" || order.currency !== currency) continue
    if (order.fingerprint !== creditFingerprint(order.amount, currency, account)) continue
    balance += order.amount
    credits++
  }
  return {
    type: "loyalty-balance",
    "serial-number": serialNumber(),
    loyalty_account: account,
    currency,
    balance: engine.format(balance, currency),
    credits: String(credits)
  }
}
