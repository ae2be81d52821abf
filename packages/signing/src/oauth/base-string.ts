import { InvalidRequestError } from "../errors"
import { parseQuery, splitUrl, toPairs, type ParamPair, type ParamsInput } from "./params"
import { percentEncode } from "./percent"

/**
 * The RFC 5849 §3.4.1.2 base string URI of a request URL: scheme and host lowercased, default port
 * dropped, path kept as given (empty → `/`), query and fragment removed.
 *
 * @example baseStringUri("HTTPS://Gate.Example.NET:443/paynet/api/v4/payout/1?x=1") // → "https://gate.example.net/paynet/api/v4/payout/1"
 * @throws {InvalidRequestError} (`invalid-url`) when the URL is not an absolute http(s) URL.
 */
export function baseStringUri(url: string): string {
  return splitUrl(url).baseUri
}

/**
 * Parameters being collected for a base string, each name and value already in the form it takes
 * inside the base string, `enc(enc(x))`, computed once per string. Encoding twice keeps the order
 * of `enc(x)` (`%`, the only character the second pass changes, sorts below every other character
 * an encoded string holds), so sorting these sorts by encoded name, then encoded value, as RFC 5849
 * asks. Two parallel arrays: sorting pairs of flat strings is far cheaper than sorting joined ones.
 */
export interface EncodedParams {
  readonly names: Array<string>
  readonly values: Array<string>
}

/** An empty list. */
export function encodedParams(): EncodedParams {
  return { names: [], values: [] }
}

const UNRESERVED_ONLY = /^[A-Za-z0-9\-._~]*$/

/**
 * `enc(enc(value))`, the form a name or value takes inside the base string: the second pass changes
 * only `%` (to `%25`). Kept in this module, the hot path's, so each call is a local one.
 */
export function encodeTwice(value: string): string {
  if (UNRESERVED_ONLY.test(value)) return value
  return percentEncode(value).replaceAll("%", "%25")
}

function checkString(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidRequestError(field, "not-a-string")
  return value
}

/** @throws {InvalidRequestError} (`reserved-name`) for an `oauth_*` name. */
function refuseProtocolName(name: string): void {
  if (name.startsWith("oauth_")) throw new InvalidRequestError(name.slice(0, 40), "reserved-name")
}

/**
 * Encodes and appends every pair of `input`. With `refuseProtocolNames`, an `oauth_*` name is an
 * error: a signer puts the protocol parameters in the header, and one in the body too would be
 * signed twice.
 */
export function pushParams(input: ParamsInput | undefined, out: EncodedParams, refuseProtocolNames: boolean): void {
  if (input === undefined) return
  const pairs: ReadonlyArray<ParamPair> = Array.isArray(input) ? (input as ReadonlyArray<ParamPair>) : toPairs(input)
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as ParamPair
    const name = checkString(pair[0], "parameter name")
    if (refuseProtocolNames && name.startsWith("oauth_")) refuseProtocolName(name)
    out.names.push(encodeTwice(name))
    out.values.push(encodeTwice(checkString(pair[1], name)))
  }
}

/** Appends already-encoded lists (the URL's query, a consumer's fixed protocol parameters). */
export function pushEncoded(from: EncodedParams, out: EncodedParams): void {
  for (let i = 0; i < from.names.length; i++) {
    out.names.push(from.names[i] as string)
    out.values.push(from.values[i] as string)
  }
}

/**
 * Sorts by encoded name, then encoded value (plain `<` on ASCII strings is byte order). An
 * insertion sort: a request has a dozen or two parameters, mostly in near order.
 */
function sortParams(params: EncodedParams): void {
  const { names, values } = params
  for (let i = 1; i < names.length; i++) {
    const name = names[i] as string
    const value = values[i] as string
    let j = i - 1
    while (j >= 0) {
      const other = names[j] as string
      if (other < name || (other === name && (values[j] as string) <= value)) break
      names[j + 1] = other
      values[j + 1] = values[j] as string
      j--
    }
    names[j + 1] = name
    values[j + 1] = value
  }
}

/**
 * Sorts `params` in place and joins them, in one pass, into the parameter part of the base string:
 * `enc(normalized parameters)`, where `=` is `%3D` and `&` is `%26`.
 */
function encodedParameters(params: EncodedParams): string {
  sortParams(params)
  const { names, values } = params
  let out = ""
  for (let i = 0; i < names.length; i++) {
    out += i === 0 ? `${names[i] as string}%3D${values[i] as string}` : `%26${names[i] as string}%3D${values[i] as string}`
  }
  return out
}

/**
 * The normalized parameters from their encoded form (one decoding of an ASCII string). Computed
 * only when asked for: the signature needs the encoded form alone.
 */
export function normalizedOf(encoded: string): string {
  return decodeURIComponent(encoded)
}

/**
 * RFC 5849 §3.4.1.3.2 parameter normalisation: percent-encode every name and value, sort by
 * encoded name then encoded value (byte order), join `name=value` with `&`. Duplicates are kept;
 * an empty value gives `name=`. The caller decides which pairs enter (see
 * {@link signatureBaseString}).
 *
 * @example normalizeParameters([["b", "2"], ["a", "x y"], ["a", "1"]]) // → "a=1&a=x%20y&b=2"
 */
export function normalizeParameters(params: ParamsInput): string {
  const encoded = encodedParams()
  pushParams(params, encoded, false)
  return normalizedOf(encodedParameters(encoded))
}

/** The pieces of a signature base string, as the vectors name them. */
export interface BaseStringParts {
  /** The base string URI (RFC 5849 §3.4.1.2): scheme, host, port when not default, and path, without query. */
  readonly baseStringUri: string
  /** The normalized request parameters (RFC 5849 §3.4.1.3.2). */
  readonly normalizedParameters: string
  /** The signature base string: `METHOD&enc(baseStringUri)&enc(normalizedParameters)`. */
  readonly baseString: string
}

const METHOD = /^[A-Za-z]+$/

/** `POST` (the default and the payment API's only method) without a check; others validated. */
export function methodOf(method: string | undefined): string {
  if (method === undefined || method === "POST") return "POST"
  if (typeof method !== "string" || !METHOD.test(method)) throw new InvalidRequestError("method", "invalid-value")
  return method.toUpperCase()
}

/** A request URL split once: the parts every signature of that URL shares. */
interface UrlParts {
  readonly baseUri: string
  /** `enc(baseUri)`, as it enters the base string. */
  readonly encodedBaseUri: string
  /** The query, form-decoded. */
  readonly queryPairs: ReadonlyArray<ParamPair>
  /** The query's parameters, encoded (as in {@link EncodedParams}). */
  readonly queryParams: EncodedParams
  /** Whether a query name starts with `oauth_`. */
  readonly queryHasProtocolName: boolean
}

// A client signs a handful of URLs (one per operation and endpoint) over and over; splitting,
// decoding and encoding each once saves most of the per-request URL work. Bounded, so a caller
// signing ever-new URLs (a query with an order id, say) costs a cleared map, not unbounded memory.
const URL_CACHE_LIMIT = 256
const urlCache = new Map<string, UrlParts>()

/**
 * Splits and encodes a URL, from a small cache.
 *
 * @throws {InvalidRequestError} for a bad URL or a malformed query.
 */
export function urlParts(url: string): UrlParts {
  const cached = urlCache.get(url)
  if (cached !== undefined) return cached
  const { baseUri, query } = splitUrl(url)
  const queryPairs = parseQuery(query)
  const queryParams = encodedParams()
  pushParams(queryPairs, queryParams, false)
  const parts: UrlParts = {
    baseUri,
    encodedBaseUri: percentEncode(baseUri),
    queryPairs,
    queryParams,
    queryHasProtocolName: queryPairs.some((pair) => pair[0].startsWith("oauth_"))
  }
  if (urlCache.size >= URL_CACHE_LIMIT) urlCache.clear()
  urlCache.set(url, parts)
  return parts
}

/** A base string and its parts, the normalized parameters still in their encoded form. */
export interface AssembledBaseString {
  readonly baseStringUri: string
  /** `enc(normalized parameters)`; {@link normalizedOf} gives the parameters. */
  readonly encodedParameters: string
  readonly baseString: string
}

/**
 * The base string from a method, the URL's parts and every other parameter (body and protocol),
 * encoded. `params` is sorted in place.
 */
function assembleBaseString(method: string, url: UrlParts, params: EncodedParams): AssembledBaseString {
  const encoded = encodedParametersOf(url, params)
  return { baseStringUri: url.baseUri, encodedParameters: encoded, baseString: `${method}&${url.encodedBaseUri}&${encoded}` }
}

/** The URL's query joined to `params`, sorted and encoded: the base string's last part. */
export function encodedParametersOf(url: UrlParts, params: EncodedParams): string {
  pushEncoded(url.queryParams, params)
  return encodedParameters(params)
}

/**
 * The base string from a split base string URI and the complete, final parameter list.
 *
 * @internal
 */
export function baseStringOf(method: string, baseUri: string, pairs: ReadonlyArray<ParamPair>): string {
  const verb = methodOf(method)
  const params = encodedParams()
  pushParams(pairs, params, false)
  return `${verb}&${percentEncode(baseUri)}&${encodedParameters(params)}`
}

/**
 * The RFC 5849 §3.4.1 signature base string: `METHOD&enc(base string URI)&enc(normalized
 * parameters)`. The parameters are the URL's query (form-decoded) plus `params`, which should be
 * the form body and the `oauth_*` protocol parameters without `oauth_signature` and `realm`.
 *
 * @example
 * signatureBaseString("POST", "https://gateway.example/paynet/api/v4/sale/123",
 *   [["oauth_consumer_key", "merchant"], ["amount", "1.00"], ["client_orderid", "hf-1"]])
 * // → "POST&https%3A%2F%2Fgateway.example%2Fpaynet%2Fapi%2Fv4%2Fsale%2F123&amount%3D1.00%26client_orderid%3Dhf-1%26oauth_consumer_key%3Dmerchant"
 * @throws {InvalidRequestError} for a bad method or URL, malformed query encoding, a non-string
 *   value or a lone surrogate.
 */
export function signatureBaseString(method: string, url: string, params: ParamsInput): string {
  const verb = methodOf(method)
  const encoded = encodedParams()
  pushParams(params, encoded, false)
  return assembleBaseString(verb, urlParts(url), encoded).baseString
}
