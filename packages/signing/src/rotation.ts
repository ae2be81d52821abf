/**
 * Control-key rotation: a merchant's control key as one key or a list, current key first. During a
 * rotation the gateway signs callbacks and final redirects with the old key or the new one, so a
 * receiver verifies against every listed key and learns which one matched, by its index in the
 * list and never the key itself. Requests are always signed with the first (current) key.
 *
 * @packageDocumentation
 */
import { verifyCallbackControlAsync } from "./async"
import { callbackConcatenation, type CallbackControlValues } from "./callback"
import type { CryptoOptions } from "./crypto/runtime"
import { compareControl } from "./control"
import { ControlVerificationError, InvalidRequestError, type ControlFailureReason } from "./errors"
import { sha1Hex } from "./hash"

/** A control key, or the keys of a rotation with the current (signing) key first. */
export type ControlKeys = string | ReadonlyArray<string>

/**
 * Result of a verification against several keys: `ok` with the index of the key that matched
 * (0 is the current key), or the reason and a typed error. Neither carries a key.
 */
export type RotatedVerifyResult =
  | {
      /** The control matched one of the listed keys. */
      readonly ok: true
      /** Which listed key matched: 0 for the first (current) key, 1 for the next, ... */
      readonly keyIndex: number
    }
  | {
      /** No listed key matched, or the control is missing or malformed. */
      readonly ok: false
      /** Why the control was refused (`mismatch` when it matched none of the keys). */
      readonly reason: ControlFailureReason
      /** A typed error for `reason`, for callers who prefer to throw. */
      readonly error: ControlVerificationError
    }

/**
 * The listed keys as an array, checked: at least one, each a non-empty string. The error names the
 * position (`key[1]`), never a key.
 *
 * @example
 * controlKeyList("k") // → ["k"]
 * controlKeyList(["new", "old"]) // → ["new", "old"]
 *
 * @throws {InvalidRequestError} for an empty list or an empty or non-string key.
 */
export function controlKeyList(keys: ControlKeys): ReadonlyArray<string> {
  const list = typeof keys === "string" ? [keys] : keys
  if (!Array.isArray(list) || list.length === 0) throw new InvalidRequestError("key", "missing", "no control key listed")
  list.forEach((key: unknown, index) => {
    if (typeof key !== "string" || key.length === 0) {
      throw new InvalidRequestError(list.length === 1 ? "key" : `key[${index}]`, "missing")
    }
  })
  return list
}

/**
 * The key requests are signed with: the only key, or the first of a rotation's list.
 *
 * @example
 * signingKey(["new-key", "old-key"]) // → "new-key"
 *
 * @throws {InvalidRequestError} as {@link controlKeyList}.
 */
export function signingKey(keys: ControlKeys): string {
  return controlKeyList(keys)[0] as string
}

/**
 * Verifies a callback's or final redirect's `control` against each listed key, in constant time per
 * key, and reports which key matched by index. Every key is tried (no early exit), so the time
 * does not tell which key matched. A missing or malformed control is reported as such; otherwise
 * `mismatch` when no key matches.
 *
 * @example
 * const result = verifyCallbackControlWithKeys(
 *   { status: "approved", orderid: "1234567", client_orderid: "hf-abc" },
 *   "652ace404c4dfe8bba069ecee594ec23a89340e1",
 *   ["new-merchant-control", "test-merchant-control"])
 * // → { ok: true, keyIndex: 1 }: signed with the previous key
 *
 * @throws {InvalidRequestError} when `status`, `orderid` or `client_orderid` is absent or not a
 *   string, or a listed key is empty (see {@link controlKeyList}).
 */
export function verifyCallbackControlWithKeys(
  values: CallbackControlValues,
  received: string | undefined,
  keys: ControlKeys
): RotatedVerifyResult {
  const list = controlKeyList(keys)
  let matched = -1
  let failure: ControlFailureReason = "mismatch"
  for (let index = 0; index < list.length; index++) {
    const result = compareControl(sha1Hex(callbackConcatenation(values, list[index] as string)), received)
    if (result.ok) {
      if (matched < 0) matched = index
    } else if (result.reason !== "mismatch") failure = result.reason
  }
  if (matched >= 0) return { ok: true, keyIndex: matched }
  return { ok: false, reason: failure, error: new ControlVerificationError(failure) }
}

/**
 * Asynchronous {@link verifyCallbackControlWithKeys}: the same result, on `node:crypto` where it
 * exists, else WebCrypto (or as `options.crypto` says). Every key is tried.
 *
 * @throws {InvalidRequestError} (as a rejected Promise) for the inputs the synchronous one refuses.
 */
export async function verifyCallbackControlWithKeysAsync(
  values: CallbackControlValues,
  received: string | undefined,
  keys: ControlKeys,
  options: CryptoOptions = {}
): Promise<RotatedVerifyResult> {
  const list = controlKeyList(keys)
  const results = await Promise.all(list.map((key) => verifyCallbackControlAsync(values, received, key, options)))
  const matched = results.findIndex((result) => result.ok)
  if (matched >= 0) return { ok: true, keyIndex: matched }
  const failure = results.find((result) => !result.ok && result.reason !== "mismatch")
  const reason: ControlFailureReason = failure === undefined || failure.ok ? "mismatch" : failure.reason
  return { ok: false, reason, error: new ControlVerificationError(reason) }
}
