/**
 * Test helpers: requests signed with @paykit/signing (never with @paykit/client), and a decoder
 * that checks every reply body against the contracts' Schemas (200 → the operation's response
 * Schema, 400 → ValidationErrorResponse, 500 → ServerErrorResponse; anything else fails).
 */
import { Schema } from "effect"
import { afterEach, beforeEach, expect } from "vitest"
import { operations, operationSchemas, ServerErrorResponse, ValidationErrorResponse, ServerCallback, type OperationId } from "@paykit/contracts"
import { loadPrivateKey, signControl, signOAuth, verifyCallbackControl } from "@paykit/signing"
import { createSimulator, testMerchant, type Simulator } from "../src/index"

/** The origin used for in-process requests. */
export const BASE = "http://sim.test"

const privateKey = loadPrivateKey(testMerchant.privateKeyPem)

const strict = { errors: "all", onExcessProperty: "error" } as const

/** Decodes a reply body by the Schema its status calls for; throws (fails the test) otherwise. */
export function decodeReply(operationId: OperationId, status: number, body: unknown): Record<string, unknown> {
  const schema = status === 200
    ? (operationSchemas[operationId].response as Schema.Schema<unknown, unknown, never>)
    : status === 400
      ? (ValidationErrorResponse as Schema.Schema<unknown, unknown, never>)
      : status === 500
        ? (ServerErrorResponse as Schema.Schema<unknown, unknown, never>)
        : undefined
  if (schema === undefined) throw new Error(`${operationId}: unexpected HTTP status ${status}`)
  return Schema.decodeUnknownSync(schema, strict)(body) as Record<string, unknown>
}

/** A decoded reply. */
export interface Reply {
  readonly status: number
  readonly body: Record<string, any>
  readonly headers: Headers
}

/** Options of {@link signedRequest}. */
export interface SignOptions {
  /** An int64: past 2^53 give it as a digit string. */
  readonly endpointId?: number | string
  /** Address the endpoint-group path form `/…/group/{endpointId}` (decision 16). */
  readonly group?: boolean
  /** Skip signing (no control / no Authorization). */
  readonly unsigned?: boolean
  /** Tamper with the result before sending. */
  readonly mutate?: (init: { url: string; headers: Record<string, string>; fields: Record<string, string> }) => void
  readonly controlKey?: string
  readonly login?: string
  readonly timestamp?: number
  readonly nonce?: string
  /** Send through this fetch instead of sim.fetch (e.g. over HTTP). */
  readonly fetch?: (request: Request) => Promise<Response>
  readonly base?: string
  /** The minor-units mode of the control digest (decision 2; the simulator's merchant must match). */
  readonly minorUnits?: "cents" | "iso4217"
}

/** Builds a signed Request for an operation (control or OAuth per the operation table). */
export function buildRequest(sim: Simulator, operationId: OperationId, fields: Record<string, string>, options: SignOptions = {}): Request {
  const spec = operations[operationId]
  const endpointId = options.endpointId ?? testMerchant.endpointId
  const url = `${options.base ?? BASE}${spec.path.replace("{endpointId}", `${options.group === true ? "group/" : ""}${endpointId}`)}`
  const headers: Record<string, string> = {
    accept: "application/vnd.pay+json",
    "content-type": "application/x-www-form-urlencoded"
  }
  const body: Record<string, string> = { ...fields }
  const key = options.controlKey ?? testMerchant.controlKey
  if (!options.unsigned) {
    if (spec.auth.scheme === "control") {
      body["control"] = signControl(operationId, body, { key, endpointId, ...(options.minorUnits === undefined ? {} : { minorUnits: options.minorUnits }) })
    } else {
      const signed = signOAuth(
        spec.auth.scheme === "oauth-hmac-sha1"
          ? { url, params: Object.entries(body), consumerKey: options.login ?? testMerchant.login, signatureMethod: "HMAC-SHA1", consumerSecret: key }
          : { url, params: Object.entries(body), consumerKey: options.login ?? testMerchant.login, signatureMethod: "RSA-SHA256", privateKey },
        {
          timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
          ...(options.nonce === undefined ? {} : { nonce: options.nonce })
        }
      )
      headers["authorization"] = signed.authorizationHeader
    }
  }
  const init = { url, headers, fields: body }
  options.mutate?.(init)
  return new Request(init.url, { method: "POST", headers: init.headers, body: new URLSearchParams(init.fields).toString() })
}

/** Sends a signed request and decodes the reply by the contracts' Schemas. */
export async function signedRequest(sim: Simulator, operationId: OperationId, fields: Record<string, string>, options: SignOptions = {}): Promise<Reply> {
  const response = await (options.fetch ?? sim.fetch)(buildRequest(sim, operationId, fields, options))
  return readReply(operationId, response)
}

/** Reads and decodes a reply. */
export async function readReply(operationId: OperationId, response: Response): Promise<Reply> {
  expect(response.headers.get("content-type")).toBe("application/vnd.pay+json")
  const body = decodeReply(operationId, response.status, await response.json())
  return { status: response.status, body, headers: response.headers }
}

/** Expects a 400 with this error-code. */
export function expectError(reply: Reply, code: string, status = 400): void {
  expect({ status: reply.status, code: reply.body["error-code"] }).toEqual({ status, code })
}

/** An in-process callback receiver to pass as `callbackFetch` (checking each control with `controlKey`). */
export function callbackReceiver(answer: (attempt: number) => number = () => 200, controlKey: string = testMerchant.controlKey) {
  const received: Array<Record<string, string>> = []
  let attempts = 0
  const fetch = (async (input: RequestInfo | URL) => {
    attempts += 1
    const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url)
    const params = Object.fromEntries(url.searchParams)
    // Every callback must decode by the ServerCallback Schema (the merchant's own query aside) and
    // carry a valid control.
    const { "secret-token": _own, ...callback } = params
    Schema.decodeUnknownSync(ServerCallback, strict)(callback)
    const check = verifyCallbackControl(
      { status: params["status"]!, orderid: params["orderid"]!, client_orderid: params["client_orderid"]! },
      params["control"],
      controlKey
    )
    expect(check.ok).toBe(true)
    received.push(params)
    return new Response("ok", { status: answer(attempts) })
  }) as typeof globalThis.fetch
  return { fetch, received, attempts: () => attempts }
}

/** Status of an order via the STATUS operation. */
export async function statusOf(sim: Simulator, orderid: string, clientOrderId: string): Promise<Record<string, any>> {
  const reply = await signedRequest(sim, "STATUS", { login: testMerchant.login, client_orderid: clientOrderId, orderid })
  expect(reply.status).toBe(200)
  return reply.body
}

/**
 * A fresh simulator per test, made before each and closed after each; after each test its ledger
 * invariants must all hold (a violation is a simulator bug, whatever the test checked). `assign`
 * receives each new simulator (the test file keeps its own `let sim`).
 */
export function useCheckedSimulator(assign: (sim: Simulator) => void): void {
  let current: Simulator | undefined
  beforeEach(() => {
    current = createSimulator()
    assign(current)
  })
  afterEach(async () => {
    expect(current!.checkInvariants()).toEqual([])
    await current!.close()
  })
}
