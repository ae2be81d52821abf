/**
 * Test helpers: requests signed with @paykit/signing (never with @paykit/client), and a decoder
 * that checks every reply body against the contracts' Schemas (200 → the operation's response
 * Schema, 400 → ValidationErrorResponse, 500 → ServerErrorResponse; anything else fails).
 */
import { Schema } from "effect"
import { afterEach, beforeEach, expect } from "vitest"
import { operationSchemas, ServerErrorResponse, ValidationErrorResponse, ServerCallback, type OperationId } from "@paykit/contracts"
import { verifyCallbackControl } from "@paykit/signing"
import { createSimulator, testMerchant, type Simulator } from "../src/index"

export { BASE, buildRequest, type SignOptions } from "./signed-request"
import { buildRequest, type SignOptions } from "./signed-request"

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
