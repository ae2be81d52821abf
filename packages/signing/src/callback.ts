import { compareControl, type ControlVerifyResult } from "./control"
import { InvalidRequestError } from "./errors"
import { sha1Hex } from "./hash"

/** The callback (and final redirect) parameters the control covers, as received. */
export interface CallbackControlValues {
  /** The callback's `status` field. */
  readonly status: string
  /** The gateway's order id (`orderid`). */
  readonly orderid: string
  /** The merchant's order id (`client_orderid`). */
  readonly client_orderid: string
}

const CALLBACK_FIELDS = ["status", "orderid", "client_orderid"] as const

/** @internal */
export function callbackConcatenation(values: CallbackControlValues, key: string): string {
  if (typeof key !== "string" || key.length === 0) throw new InvalidRequestError("key", "missing")
  let out = ""
  for (const field of CALLBACK_FIELDS) {
    const value: unknown = values[field]
    // A missing field must not turn into the text "undefined" inside the digest input.
    if (value === undefined) throw new InvalidRequestError(field, "missing")
    if (typeof value !== "string") throw new InvalidRequestError(field, "not-a-string")
    out += value
  }
  return out + key
}

/**
 * The `control` of a callback or final redirect: lowercase hex
 * SHA-1(status + orderid + client_orderid + merchant control key), UTF-8, no separators.
 *
 * @example
 * callbackControl({ status: "approved", orderid: "1234567", client_orderid: "hf-abc" }, "test-merchant-control")
 * // → "652ace404c4dfe8bba069ecee594ec23a89340e1"
 *
 * @throws {InvalidRequestError} when a field is absent or not a string, or the key is empty.
 */
export function callbackControl(values: CallbackControlValues, key: string): string {
  return sha1Hex(callbackConcatenation(values, key))
}

/**
 * Checks a received callback `control` (either hex letter case) in constant time. Returns a
 * result; `result.error` is a ready `ControlVerificationError`. Throws `InvalidRequestError` when
 * `status`, `orderid` or `client_orderid` is absent, since then there is nothing to verify.
 *
 * @example
 * const query = new URL(request.url).searchParams
 * const result = verifyCallbackControl(
 *   { status: query.get("status") ?? "", orderid: query.get("orderid") ?? "", client_orderid: query.get("client_orderid") ?? "" },
 *   query.get("control") ?? undefined, controlKey)
 */
export function verifyCallbackControl(
  values: CallbackControlValues,
  received: string | undefined,
  key: string
): ControlVerifyResult {
  return compareControl(sha1Hex(callbackConcatenation(values, key)), received)
}
