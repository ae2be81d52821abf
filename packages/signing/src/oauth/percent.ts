import { InvalidRequestError } from "../errors"

// encodeURIComponent already emits uppercase %XX of the UTF-8 bytes and keeps A-Z a-z 0-9 - _ . ~
// plus these five, which RFC 3986 / RFC 5849 §3.6 require encoded.
const SUB_DELIMS = /[!'()*]/g
const HAS_SUB_DELIMS = /[!'()*]/
const UNRESERVED_ONLY = /^[A-Za-z0-9\-._~]*$/

function escapeSubDelim(c: string): string {
  return `%${c.charCodeAt(0).toString(16).toUpperCase()}`
}

/**
 * RFC 5849 §3.6 percent-encoding: the string's UTF-8 bytes, keeping only `A-Z a-z 0-9 - . _ ~` and
 * writing every other byte as `%XX` with uppercase hex (space is `%20`, never `+`).
 *
 * @example percentEncode("a b+é*") // → "a%20b%2B%C3%A9%2A"
 * @throws {InvalidRequestError} (`lone-surrogate`) when the string is not well-formed UTF-16 and
 *   so has no UTF-8 encoding; silently signing U+FFFD instead would sign a different value.
 */
export function percentEncode(value: string): string {
  if (UNRESERVED_ONLY.test(value)) return value
  let encoded: string
  try {
    encoded = encodeURIComponent(value)
  } catch {
    throw new InvalidRequestError("parameter", "lone-surrogate")
  }
  return HAS_SUB_DELIMS.test(encoded) ? encoded.replace(SUB_DELIMS, escapeSubDelim) : encoded
}

const ENCODED_FORM = /^(?:[A-Za-z0-9\-._~]|%[0-9A-Fa-f]{2})*$/

/**
 * Inverse of {@link percentEncode} for strictly encoded input (only unreserved characters and
 * `%XX` escapes of either case, forming valid UTF-8). Returns `undefined` for anything else, so a
 * verifier can reject sloppy encodings instead of guessing.
 */
export function percentDecode(value: string): string | undefined {
  if (!ENCODED_FORM.test(value)) return undefined
  if (!value.includes("%")) return value
  try {
    return decodeURIComponent(value)
  } catch {
    return undefined
  }
}

/**
 * Decodes one `application/x-www-form-urlencoded` component: `+` is a space, `%XX` (either case)
 * are UTF-8 bytes. Unlike `URLSearchParams`, a stray `%` or invalid UTF-8 is an error, not a
 * replacement character, so the signed value is never silently different from the sent one.
 */
export function formDecode(value: string, field: string): string {
  const plus = value.includes("+") ? value.replace(/\+/g, " ") : value
  if (!plus.includes("%")) return plus
  try {
    return decodeURIComponent(plus)
  } catch {
    throw new InvalidRequestError(field, "invalid-value", "bad percent-encoding")
  }
}
