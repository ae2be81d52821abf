/**
 * Request dispatch. API routes come from the contracts' operation table (data, not hand-written
 * routes), precomputed once into a map from path prefix to operation; test-only routes and HTML
 * pages live under /__sim.
 *
 * @packageDocumentation
 */
import { operations, operationSchemas, structFields, type OperationId, type OperationSpec } from "@paykit/contracts"
import type { Engine } from "../engine/engine"
import { checkControl, checkOAuth } from "../auth/auth"
import type { Merchant } from "../auth/merchant"
import { SimError, errorReply, json, type SimReply, type SimRequest } from "../http/replies"
import { checkAccept, checkCardNumbers, checkContentType, decodeRequest, parseFields, parseForm, type Fields } from "../http/validation"
import { ConnectionReset } from "../rules/faults"
import type { Handler, OpContext } from "../operations/context"
import { paymentHandlers } from "../operations/payments"
import { cardHandlers } from "../operations/cards"
import { payoutHandlers } from "../operations/payouts"
import { recurringHandlers } from "../operations/recurring"
import { formHandlers } from "../operations/forms"
import { handlePage } from "../hosted-pages/routes"
import { handleTestRoute } from "../test-routes/routes"
import { X_TEST_PREFIX, handleXTestOperation } from "../operations/x-test-operations"
import { parseEndpointId } from "../http/endpoint-id"
import { handleDashboard } from "../dashboard/routes"

const handlers: Record<OperationId, Handler> = {
  ...paymentHandlers,
  ...cardHandlers,
  ...payoutHandlers,
  ...recurringHandlers,
  ...formHandlers
}

/** An API route (opaque outside this module): what a transport that reads the body itself hands back. */
export interface Route {
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

/**
 * A request whose transport reads the body itself and then goes on with {@link withBody}
 * (node-server.ts): an API operation then costs no Promise, closure or microtask for its body.
 */
export interface BodyDeferringRequest extends SimRequest {
  /**
   * Reads the body, then calls {@link withBody} with `route`, `endpointText` and the text,
   * or answers a body that failed to arrive with {@link failure}'s reply.
   */
  deferBody(route: Route, endpointText: string): void
}

/**
 * Handles one request; throws {@link ConnectionReset} when a fault says the connection drops. The
 * reply comes back without a Promise when nothing on the way had to wait; `path` and `query` may
 * be given by a transport that has them already. A {@link BodyDeferringRequest} of an API
 * operation gets `undefined`: its transport goes on once the body is in.
 */
export function route(engine: Engine, request: BodyDeferringRequest, path: string, query: string): SimReply | Promise<SimReply> | undefined
export function route(engine: Engine, request: SimRequest, path?: string, query?: string): SimReply | Promise<SimReply>
export function route(engine: Engine, request: SimRequest, path?: string, query?: string): SimReply | Promise<SimReply> | undefined {
  // A closed simulator is a dead server: the connection drops, nothing is processed.
  if (engine.closed) throw new ConnectionReset()
  if (path === undefined) {
    const url = request.url
    // Parse only the path: new URL() per request is measurable on the hot path.
    const start = url.indexOf("/", url.indexOf("//") + 2)
    const queryAt = url.indexOf("?", start)
    path = start < 0 ? "/" : url.slice(start, queryAt < 0 ? undefined : queryAt)
    query = queryAt < 0 ? "" : url.slice(queryAt + 1)
  }
  const slash = path.lastIndexOf("/")
  const found = routes.get(path.slice(0, slash + 1))
  if (found !== undefined) return api(engine, found, request, path.slice(slash + 1))
  // The gateway's endpoint-group form (decision 16): /{path without endpointId}/group/{endpointGroupId}.
  if (path.slice(0, slash).endsWith(GROUP_SEGMENT)) {
    const grouped = routes.get(path.slice(0, slash - GROUP_SEGMENT.length + 1))
    if (grouped !== undefined) return api(engine, grouped, request, path.slice(slash + 1))
  }
  return simRoute(engine, request, path, query ?? "")
}

/** Pages, test routes and the dashboard under /__sim/, else the 404 of an unknown path. */
async function simRoute(engine: Engine, request: SimRequest, path: string, query: string): Promise<SimReply> {
  if (path.startsWith("/__sim/")) {
    engine.tick()
    const page = await handlePage(engine, request, path)
    if (page !== undefined) return page
    const test = await handleTestRoute(engine, request, path, query)
    if (test !== undefined) return test
    const ui = await handleDashboard(engine, request, path, query)
    if (ui !== undefined) return ui
  }
  // Test-only operations beyond the spec (x-test-operations.ts).
  const xTest = path.startsWith(X_TEST_PREFIX) ? await handleXTestOperation(engine, request, path) : undefined
  if (xTest !== undefined) return xTest
  return json({ type: "validation-error", "serial-number": "0", "error-message": `path: no operation at ${path}`, "error-code": "unknown-path" }, 404)
}

function api(engine: Engine, r: Route, request: SimRequest, endpointText: string): SimReply | Promise<SimReply> | undefined {
  engine.tick()
  if (!engine.faults.empty) return apiWithFaults(engine, r, request, endpointText)
  const refused = headerRefusal(r, request)
  if (refused !== undefined) return Promise.resolve(refused)
  if ("deferBody" in request) {
    ;(request as BodyDeferringRequest).deferBody(r, endpointText)
    return undefined
  }
  return withBodyOf(engine, r, request, endpointText)
}

/** The faults that act before a request is read: latency, a 500, a dropped connection. */
async function apiWithFaults(engine: Engine, r: Route, request: SimRequest, endpointText: string): Promise<SimReply> {
  const id = r.spec.operationId
  const latency = engine.faults.take(id, "latency")
  if (latency !== undefined) await new Promise((resolve) => setTimeout(resolve, latency.latencyMs))
  if (engine.faults.take(id, "http-500") !== undefined) {
    return errorReply(new SimError("internal-error", "simulated gateway failure; the request was not processed"))
  }
  if (engine.faults.take(id, "reset-before") !== undefined) throw new ConnectionReset()
  return headerRefusal(r, request) ?? withBodyOf(engine, r, request, endpointText)
}

/** The reply refusing what the headers say (method, Accept, Content-Type), or undefined: read the body. */
function headerRefusal(r: Route, request: SimRequest): SimReply | undefined {
  try {
    if (request.method !== "POST") throw new SimError("invalid-field", `method: ${r.spec.operationId} takes POST`)
    checkAccept(request.header("accept"))
    checkContentType(request.header("content-type"))
    return undefined
  } catch (error) {
    return failure(error)
  }
}

/** Reads the body, then goes on in {@link withBody}. */
function withBodyOf(engine: Engine, r: Route, request: SimRequest, endpointText: string): Promise<SimReply> {
  let body: Promise<string>
  try {
    body = request.text()
  } catch (error) {
    return Promise.resolve(failure(error))
  }
  return body.then((text) => withBody(engine, r, request, endpointText, text), failure)
}

/**
 * Parse, validate, authenticate and run the operation; waits only for an OAuth verification. Also
 * the rest of an API request once a {@link BodyDeferringRequest}'s body is in (node-server.ts);
 * throws {@link ConnectionReset} when the connection drops.
 */
export function withBody(engine: Engine, r: Route, request: SimRequest, endpointText: string, text: string): SimReply | Promise<SimReply> {
  try {
    const fields = parseFields(text)
    // int64 as digits (docs/decisions.md#d16i-int64-endpoint-ids): Number() would merge ids past 2^53.
    const endpointId = parseEndpointId(endpointText)
    if (endpointId === undefined) throw new SimError("invalid-field", "endpointId: must be an integer from 1 to 2^63-1, written without sign or leading zero")
    decodeRequest(r.spec.operationId, fields)
    const clientOrderId = fields["client_orderid"] ?? fields["client-order-id"] ?? fields["client-orderid"]
    if (r.hasAmount) checkAmount(engine, fields, clientOrderId)
    checkCardNumbers(fields)
    if (r.spec.auth.scheme === "control") return run(engine, r, controlMerchant(engine, r, fields, endpointId, clientOrderId), fields, endpointId, clientOrderId)
    return oauthMerchant(engine, r, request, fields, parseForm(text).pairs, endpointId, clientOrderId).then(
      (merchant) => run(engine, r, merchant, fields, endpointId, clientOrderId),
      failure
    )
  } catch (error) {
    return failure(error)
  }
}

/** Runs the operation for a proven merchant. */
function run(engine: Engine, r: Route, merchant: Merchant, fields: Fields, endpointId: string, clientOrderId: string | undefined): SimReply {
  const id = r.spec.operationId
  let response: SimReply
  try {
    // Charged only once the merchant is proven: nobody can empty another merchant's bucket.
    engine.fairUse?.take(merchant.login, clientOrderId)
    const ctx: OpContext = { engine, operationId: id, merchant, endpointId, fields }
    // Closed while this request awaited its body or a fault's latency: it must not change state.
    if (engine.closed) throw new ConnectionReset()
    response = json(r.handler(ctx))
  } catch (error) {
    return failure(error)
  }
  // The charge happened; only the reply is lost.
  if (!engine.faults.empty && engine.faults.take(id, "reset-after") !== undefined) throw new ConnectionReset()
  return response
}

/** The reply of a failed request; a dropped connection stays a throw. */
export function failure(error: unknown): SimReply {
  if (error instanceof SimError) return errorReply(error)
  if (error instanceof ConnectionReset) throw error
  return errorReply(new SimError("internal-error", "unexpected simulator failure"))
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

/** The merchant of a control-signed request, its control verified. */
function controlMerchant(engine: Engine, r: Route, fields: Fields, endpointId: string, clientOrderId: string | undefined): Merchant {
  let merchant: Merchant | undefined
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

/** The merchant of an OAuth-signed request, its signature verified. */
async function oauthMerchant(
  engine: Engine,
  r: Route,
  request: SimRequest,
  fields: Fields,
  pairs: ReadonlyArray<readonly [string, string]>,
  endpointId: string,
  clientOrderId: string | undefined
): Promise<Merchant> {
  const auth = r.spec.auth
  const login = await checkOAuth(engine.oauth, {
    method: auth.scheme === "oauth-hmac-sha1" ? "HMAC-SHA1" : "RSA-SHA256",
    header: request.header("authorization"),
    url: request.url,
    pairs,
    clientOrderId
  })
  const merchant = engine.merchantByLogin(login)!
  if (!merchant.endpoints.has(endpointId)) throw new SimError("unknown-endpoint", `endpointId: ${endpointId} is not an endpoint of this merchant`, clientOrderId)
  const bodyLogin = fields["login"]
  if (bodyLogin !== undefined && bodyLogin !== merchant.login) throw new SimError("unknown-merchant", "login: differs from oauth_consumer_key", clientOrderId)
  return merchant
}
