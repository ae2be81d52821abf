/**
 * Request dispatch. API routes come from the contracts' operation table (data, not 28 hand-written
 * routes), precomputed once into a map from path prefix to operation; test-only routes and HTML
 * pages live under /__sim.
 *
 * @packageDocumentation
 */
import { operations, operationSchemas, structFields, type OperationId, type OperationSpec } from "@paykit/contracts"
import type { Engine } from "./engine"
import { checkControl, checkOAuth, type Merchant } from "./auth"
import { SimError, errorReply, json, type SimReply, type SimRequest } from "./replies"
import { checkAccept, checkCardNumbers, checkContentType, decodeRequest, parseForm, type Fields } from "./validation"
import { ConnectionReset } from "./faults"
import type { Handler, OpContext } from "./operations/context"
import { paymentHandlers } from "./operations/payments"
import { cardHandlers } from "./operations/cards"
import { payoutHandlers } from "./operations/payouts"
import { recurringHandlers } from "./operations/recurring"
import { formHandlers } from "./operations/forms"
import { handlePage } from "./pages/routes"
import { handleTestRoute } from "./test-routes"
import { parseEndpointId } from "./endpoint-id"
import { handleDashboard } from "./ui/routes"

const handlers: Record<OperationId, Handler> = {
  ...paymentHandlers,
  ...cardHandlers,
  ...payoutHandlers,
  ...recurringHandlers,
  ...formHandlers
}

interface Route {
  readonly spec: OperationSpec & { readonly operationId: OperationId }
  readonly handler: Handler
  /** Whether control includes the endpointId path parameter (C2, C6): the endpoint names the merchant. */
  readonly endpointInControl: boolean
  /** Whether the request schema has an amount and a currency (they must then travel together). */
  readonly hasAmount: boolean
}

/** Path prefix (everything before `{endpointId}`) → route; built once at module load. */
const routes = new Map<string, Route>()
for (const spec of Object.values(operations) as Array<OperationSpec & { operationId: OperationId }>) {
  const prefix = spec.path.slice(0, spec.path.indexOf("{endpointId}"))
  routes.set(prefix, {
    spec,
    handler: handlers[spec.operationId],
    endpointInControl: spec.auth.scheme === "control" && spec.auth.fields.includes("endpointId"),
    hasAmount: hasAmountAndCurrency(structFields<object>(operationSchemas[spec.operationId].request))
  })
}

/**
 * Whether amount and currency must travel together. Recurring process and update carry an amount
 * without a currency (the profile's, as the gateway documents them); their handlers check it.
 */
function hasAmountAndCurrency(fields: object): boolean {
  return "amount" in fields && "currency" in fields
}

const GROUP_SEGMENT = "/group"

/** Handles one request; throws {@link ConnectionReset} when a fault says the connection drops. */
export async function route(engine: Engine, request: SimRequest): Promise<SimReply> {
  // A closed simulator is a dead server: the connection drops, nothing is processed.
  if (engine.closed) throw new ConnectionReset()
  const url = request.url
  // Parse only the path: new URL() per request is measurable on the hot path.
  const start = url.indexOf("/", url.indexOf("//") + 2)
  const queryAt = url.indexOf("?", start)
  const path = start < 0 ? "/" : url.slice(start, queryAt < 0 ? undefined : queryAt)
  const slash = path.lastIndexOf("/")
  const found = routes.get(path.slice(0, slash + 1))
  if (found !== undefined) return api(engine, found, request, path.slice(slash + 1))
  // The gateway's endpoint-group form (decision 16): /{path without endpointId}/group/{endpointGroupId}.
  if (path.slice(0, slash).endsWith(GROUP_SEGMENT)) {
    const grouped = routes.get(path.slice(0, slash - GROUP_SEGMENT.length + 1))
    if (grouped !== undefined) return api(engine, grouped, request, path.slice(slash + 1))
  }
  if (path.startsWith("/__sim/")) {
    engine.tick()
    const page = await handlePage(engine, request, path)
    if (page !== undefined) return page
    const test = await handleTestRoute(engine, request, path, queryAt < 0 ? "" : url.slice(queryAt + 1))
    if (test !== undefined) return test
    const ui = await handleDashboard(engine, request, path, queryAt < 0 ? "" : url.slice(queryAt + 1))
    if (ui !== undefined) return ui
  }
  return json({ type: "validation-error", "serial-number": "0", "error-message": `path: no operation at ${path}`, "error-code": "invalid-field" }, 404)
}

async function api(engine: Engine, r: Route, request: SimRequest, endpointText: string): Promise<SimReply> {
  engine.tick()
  const id = r.spec.operationId
  if (!engine.faults.empty) {
    const latency = engine.faults.take(id, "latency")
    if (latency !== undefined) await new Promise((resolve) => setTimeout(resolve, latency.latencyMs))
    if (engine.faults.take(id, "http-500") !== undefined) {
      return errorReply(new SimError("internal-error", "simulated gateway failure; the request was not processed"))
    }
    if (engine.faults.take(id, "reset-before") !== undefined) throw new ConnectionReset()
  }
  let response: SimReply
  try {
    if (request.method !== "POST") throw new SimError("invalid-field", `method: ${id} takes POST`)
    checkAccept(request.header("accept"))
    checkContentType(request.header("content-type"))
    const { fields, pairs } = parseForm(await request.text())
    // int64 as digits (spec D16i): Number() would merge ids past 2^53.
    const endpointId = parseEndpointId(endpointText)
    if (endpointId === undefined) throw new SimError("invalid-field", "endpointId: must be an integer from 1 to 2^63-1, written without sign or leading zero")
    decodeRequest(id, fields)
    const clientOrderId = fields["client_orderid"] ?? fields["client-order-id"] ?? fields["client-orderid"]
    if (r.hasAmount) checkAmount(engine, fields, clientOrderId)
    checkCardNumbers(fields)
    const merchant = await authenticate(engine, r, request, fields, pairs, endpointId, clientOrderId)
    // Charged only once the merchant is proven: nobody can empty another merchant's bucket.
    engine.fairUse?.take(merchant.login, clientOrderId)
    const ctx: OpContext = { engine, operationId: id, merchant, endpointId, fields }
    // Closed while this request awaited its body or a fault's latency: it must not change state.
    if (engine.closed) throw new ConnectionReset()
    response = json(r.handler(ctx))
  } catch (error) {
    if (error instanceof SimError) return errorReply(error)
    if (error instanceof ConnectionReset) throw error
    return errorReply(new SimError("internal-error", "unexpected simulator failure"))
  }
  // The charge happened; only the reply is lost.
  if (!engine.faults.empty && engine.faults.take(id, "reset-after") !== undefined) throw new ConnectionReset()
  return response
}

/** amount and currency travel together; the amount must fit the currency's exponent. */
function checkAmount(engine: Engine, fields: Fields, clientOrderId: string | undefined): void {
  const amount = fields["amount"]
  const currency = fields["currency"]
  if (amount === undefined && currency === undefined) return
  if (amount === undefined || currency === undefined) {
    throw new SimError("currency-mismatch", "currency: amount and currency must be sent together", clientOrderId)
  }
  try {
    engine.minor(amount, currency)
  } catch (error) {
    if (error instanceof SimError) error.merchantOrderId = clientOrderId
    throw error
  }
}

async function authenticate(
  engine: Engine,
  r: Route,
  request: SimRequest,
  fields: Fields,
  pairs: ReadonlyArray<readonly [string, string]>,
  endpointId: string,
  clientOrderId: string | undefined
): Promise<Merchant> {
  const auth = r.spec.auth
  let merchant: Merchant | undefined
  if (auth.scheme === "control") {
    if (r.endpointInControl) {
      merchant = engine.merchantByEndpoint(endpointId)
      if (merchant === undefined) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint or group of a known merchant`, clientOrderId)
    } else {
      merchant = engine.merchantByLogin(fields["login"]!)
      if (merchant === undefined) throw new SimError("unknown-merchant", "login: unknown merchant", clientOrderId)
      if (!merchant.endpoints.has(endpointId)) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint of this merchant`, clientOrderId)
    }
    checkControl(r.spec.operationId, fields, endpointId, merchant)
    return merchant
  }
  const login = await checkOAuth(engine.oauth, {
    method: auth.scheme === "oauth-hmac-sha1" ? "HMAC-SHA1" : "RSA-SHA256",
    header: request.header("authorization"),
    url: request.url,
    pairs,
    clientOrderId
  })
  merchant = engine.merchantByLogin(login)!
  if (!merchant.endpoints.has(endpointId)) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint of this merchant`, clientOrderId)
  const bodyLogin = fields["login"]
  if (bodyLogin !== undefined && bodyLogin !== merchant.login) throw new SimError("unknown-merchant", "login: differs from oauth_consumer_key", clientOrderId)
  return merchant
}
