import { InvalidRequestError } from "../errors"
import { formDecode } from "./percent"

/** One decoded form or query parameter: `[name, value]`. */
export type ParamPair = readonly [name: string, value: string]

/**
 * Request parameters as decoded name/value pairs. Pairs and `URLSearchParams` keep duplicates and
 * order; a record maps a name to one value or to several (an `undefined` value is skipped).
 */
export type ParamsInput =
  | ReadonlyArray<ParamPair>
  | URLSearchParams
  | Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

function checkString(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidRequestError(field, "not-a-string")
  return value
}

/** Flattens any {@link ParamsInput} into pairs, refusing non-string names and values. */
export function toPairs(input: ParamsInput | undefined): Array<ParamPair> {
  if (input === undefined) return []
  const out: Array<ParamPair> = []
  if (Array.isArray(input)) {
    for (const pair of input as ReadonlyArray<ParamPair>) {
      const name = checkString(pair[0], "parameter name")
      out.push([name, checkString(pair[1], name)])
    }
    return out
  }
  if (input instanceof URLSearchParams) {
    for (const pair of input) out.push(pair)
    return out
  }
  for (const name of Object.keys(input)) {
    const value = (input as Readonly<Record<string, unknown>>)[name]
    if (value === undefined) continue
    if (Array.isArray(value)) {
      for (const v of value) out.push([name, checkString(v, name)])
    } else {
      out.push([name, checkString(value, name)])
    }
  }
  return out
}

/**
 * Parses a query (without `?`) as `application/x-www-form-urlencoded`: split on `&`, then on the
 * first `=`; a name without `=` has an empty value; empty pieces are skipped.
 *
 * @throws {InvalidRequestError} on malformed percent-encoding.
 */
export function parseQuery(query: string): Array<ParamPair> {
  const out: Array<ParamPair> = []
  if (query.length === 0) return out
  for (const piece of query.split("&")) {
    if (piece.length === 0) continue
    const eq = piece.indexOf("=")
    const name = formDecode(eq < 0 ? piece : piece.slice(0, eq), "url")
    out.push([name, eq < 0 ? "" : formDecode(piece.slice(eq + 1), "url")])
  }
  return out
}

/** A URL split into the RFC 5849 §3.4.1.2 base string URI and its raw query. */
interface SplitUrl {
  readonly baseUri: string
  /** The raw query without `?` ("" when absent). */
  readonly query: string
}

// RFC 3986 appendix B, restricted to absolute http(s) URLs with an authority.
const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?(?:#.*)?$/
const AUTHORITY = /^(\[[0-9A-Fa-f:.]+\]|[^:@[\]]+)(?::([0-9]*))?$/

const DEFAULT_PORT: Readonly<Record<string, string>> = { http: "80", https: "443" }

/**
 * Splits a request URL without a URL parser that would rewrite the path: scheme and host are
 * lowercased, the scheme's default port dropped (any other kept), the path kept exactly as given
 * (empty → `/`), query and fragment removed.
 *
 * @throws {InvalidRequestError} (`invalid-url`) for a non-http(s) or relative URL, user info, or a
 *   malformed authority.
 */
export function splitUrl(url: string): SplitUrl {
  const parts = typeof url === "string" ? URL_PARTS.exec(url) : null
  if (parts === null) throw new InvalidRequestError("url", "invalid-url", "expected an absolute http(s) URL")
  const scheme = (parts[1] as string).toLowerCase()
  const defaultPort = DEFAULT_PORT[scheme]
  if (defaultPort === undefined) throw new InvalidRequestError("url", "invalid-url", "scheme must be http or https")
  const authority = AUTHORITY.exec(parts[2] as string)
  if (authority === null) throw new InvalidRequestError("url", "invalid-url", "malformed host, port or user info")
  const host = (authority[1] as string).toLowerCase()
  const port = authority[2]
  const hostPort = port === undefined || port === "" || port === defaultPort ? host : `${host}:${port}`
  const path = parts[3] === "" ? "/" : (parts[3] as string)
  return { baseUri: `${scheme}://${hostPort}${path}`, query: parts[4] ?? "" }
}
