/**
 * Callback verification: the gateway's `control` signs `status`, `orderid` and `client_orderid`
 * only (SHA-1 of the three and the control key). So a verified callback vouches for those three and
 * nothing else: `type`, `amount`, `currency` and every other field are **claims**, kept apart in
 * `claims` (as sent, unknown fields included) until the handler confirms the money-relevant ones
 * against `status`.
 *
 * Accepted as the real gateway sends them: no `currency`, unknown extra fields (kept), `type`
 * `reversal` or `chargeback`. Refused: a bad or missing control, a field sent twice (parameter
 * pollution would let a holder of one genuine callback append an unsigned second value), a
 * `merchant_order` other than the signed `client_orderid`, a claim that is not well formed.
 *
 * During a key rotation (`controlKey` given as a list, current first) the control may match any
 * listed key; `Callback.keyIndex` says which, by position only.
 *
 * @packageDocumentation
 */
import type { Status, TransactionType } from "@paykit/contracts"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { CallbackSignatureError } from "../errors"
import { lazyModule } from "../lazy-module"
import { checkCallbackControl, type SigningKeys } from "../call/sign"

/**
 * The gateway's callback `type`: the transaction type (spec `info.x-paykit-transaction-types`);
 * `reversal` is a return, `chargeback` a dispute; any other word the gateway adds is accepted.
 */
export type CallbackType = TransactionType

/** The unsigned part of a callback, as sent (unknown fields kept). Claims until confirmed. */
export interface CallbackClaims {
  /** The transaction type the callback says it is about. */
  readonly type?: CallbackType | undefined
  /** The amount it says moved (major units, decimal string). */
  readonly amount?: string | undefined
  /** The currency it names (often absent in real callbacks). */
  readonly currency?: string | undefined
  /** The gateway's per-transaction approval code. */
  readonly "approval-code"?: string | undefined
  /** The processor's reference of the transaction. */
  readonly "processor-rrn"?: string | undefined
  /** Every other field, as sent. */
  readonly [field: string]: string | undefined
}

/** A callback whose `control` matched: the three signed fields, the claims beside them, and its exact text. */
export interface Callback {
  /** Signed: the status the gateway reported. */
  readonly status: Status
  /** Signed: the gateway's order id. */
  readonly orderid: string
  /** Signed: the merchant's order id. */
  readonly client_orderid: string
  /** Not signed: everything else the callback says (`type`, `amount`, `currency`, `approval-code`, ...). */
  readonly claims: CallbackClaims
  /** The query (or form body) exactly as received: a redelivery is byte-for-byte the same. */
  readonly raw: string
  /**
   * Which configured control key signed it: 0 for the current (first) key, 1 for the next, ...
   * During a key rotation this shows when the gateway stops using the old key. Never the key.
   * `verifyCallback` always sets it; it is optional only so callbacks built by hand (in tests) stay valid.
   */
  readonly keyIndex?: number | undefined
}

/** What `verifyCallback` accepts: the query of a GET callback, its URL, or the request itself (GET query or POSTed form). */
export type CallbackInput = URLSearchParams | URL | Request

// The fields' Schemas load with the first callback, not with the package.
const callbackFields = lazyModule(() => import("./callback-fields"))

/** Loads the callback fields' Schemas now, as the first callback would (a test setup's warm-up). */
export const loadCallbackFields = (): Promise<unknown> => callbackFields.load()

async function readRaw(input: CallbackInput): Promise<string> {
  if (input instanceof URLSearchParams) return input.toString()
  if (input instanceof URL) return input.search.replace(/^\?/, "")
  if (input.method === "POST") return input.text()
  return new URL(input.url).search.replace(/^\?/, "")
}

const SIGNED_NAMES = new Set(["status", "orderid", "client_orderid", "control"])

/** Verifies a callback's `control` (constant time) and splits it into signed fields and claims. */
export function verifyCallback(keys: SigningKeys, input: CallbackInput): Effect.Effect<Callback, CallbackSignatureError> {
  return Effect.flatMap(
    Effect.promise(() => Promise.all([readRaw(input).catch(() => ""), callbackFields.load()])),
    ([raw, fieldsModule]) => {
      const params = new URLSearchParams(raw)
      const seen = new Set<string>()
      for (const name of params.keys()) {
        if (seen.has(name)) return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: `${name}: sent more than once` }))
        seen.add(name)
      }
      const status = params.get("status")
      const orderid = params.get("orderid")
      const clientOrderId = params.get("client_orderid")
      if (status === null || orderid === null || clientOrderId === null) {
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: "status, orderid and client_orderid are required" }))
      }
      const checked = checkCallbackControl({ status, orderid, client_orderid: clientOrderId }, params.get("control") ?? undefined, keys)
      if (typeof checked === "string") return Effect.fail(new CallbackSignatureError({ reason: checked }))
      const merchantOrder = params.get("merchant_order")
      if (merchantOrder !== null && merchantOrder !== clientOrderId) {
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: "merchant_order: must equal the signed client_orderid" }))
      }
      const fields = Object.fromEntries(params)
      const wellFormed = fieldsModule.checkCallbackFields(fields)
      if (Either.isLeft(wellFormed)) {
        const { field, rule } = wellFormed.left
        return Effect.fail(new CallbackSignatureError({ reason: "invalid-fields", issue: `${field}: ${rule}` }))
      }
      const claims: Record<string, string> = {}
      for (const [name, value] of params) if (!SIGNED_NAMES.has(name)) claims[name] = value
      return Effect.succeed<Callback>({
        status: wellFormed.right,
        orderid,
        client_orderid: clientOrderId,
        claims,
        raw,
        keyIndex: checked.keyIndex
      })
    }
  ).pipe(Effect.withSpan("paykit.callback.verify"))
}
