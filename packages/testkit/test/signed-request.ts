/**
 * Signed requests to the simulator, built with @paykit/signing (never with @paykit/client). Free of
 * vitest, so a test's child process (e.g. test/heap/kept-fingerprints.ts) can build requests too;
 * test/helpers.ts re-exports it.
 */
import { operations, type OperationId } from "@paykit/contracts"
import { loadPrivateKey, signControl, signOAuth } from "@paykit/signing"
import { testMerchant, type Simulator } from "../src/index"

/** The origin used for in-process requests. */
export const BASE = "http://sim.test"

const privateKey = loadPrivateKey(testMerchant.privateKeyPem)

/** Options of {@link buildRequest} (and of test/helpers.ts' signedRequest). */
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
