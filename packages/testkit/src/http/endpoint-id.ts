/**
 * Endpoint and endpoint-group ids (docs/decisions.md#16-endpoint-groups, docs/decisions.md#d16i-int64-endpoint-ids). The interface types them
 * int64; a JavaScript number holds integers exactly only up to 2^53, so the simulator keeps them as
 * canonical decimal digit strings end to end (route, merchant lookup, digests, orders, snapshots)
 * and never passes one through `Number()`.
 *
 * @packageDocumentation
 */

/** The largest int64: the interface's `format: int64`. */
const INT64_MAX = 9223372036854775807n

const DIGITS = /^[1-9][0-9]{0,18}$/

/** The path segment as an endpoint id, or `undefined` when it is not 1..2^63-1 written plainly (no sign, no leading zero). */
export function parseEndpointId(text: string): string | undefined {
  if (!DIGITS.test(text)) return undefined
  // 19 digits can exceed int64; fewer never do.
  return text.length < 19 || BigInt(text) <= INT64_MAX ? text : undefined
}

/**
 * An id from a merchant configuration: a digit string, a bigint, or a number that is still exact
 * (a number past 2^53 has already lost digits, so it is refused rather than silently changed).
 * @throws {TypeError} naming `where` and the rule.
 */
export function endpointIdOf(value: number | string | bigint, where: string): string {
  const text = typeof value === "number"
    ? Number.isSafeInteger(value) ? String(value) : ""
    : typeof value === "bigint" ? value.toString() : String(value)
  const id = parseEndpointId(text)
  if (id === undefined) {
    throw new TypeError(
      `${where}: ${typeof value === "number" && !Number.isSafeInteger(value) ? "a number past 2^53 loses digits; give the id as a string" : "must be an integer from 1 to 2^63-1"} (got ${String(value).slice(0, 32)})`
    )
  }
  return id
}
