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

type EncodedPair = [name: string, value: string]

// Plain `<` on the encoded strings: they are ASCII, so code-unit order is byte order.
function compareEncoded(a: EncodedPair, b: EncodedPair): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1
  if (a[1] === b[1]) return 0
  return a[1] < b[1] ? -1 : 1
}

/** Normalises already-flattened pairs; shared by the exported helpers and the signer. */
export function normalizePairs(pairs: ReadonlyArray<ParamPair>): string {
  const encoded: Array<EncodedPair> = new Array(pairs.length)
  for (let i = 0; i < pairs.length; i++) {
    const pair = pairs[i] as ParamPair
    encoded[i] = [percentEncode(pair[0]), percentEncode(pair[1])]
  }
  encoded.sort(compareEncoded)
  let out = ""
  for (let i = 0; i < encoded.length; i++) {
    const pair = encoded[i] as EncodedPair
    out += i === 0 ? `${pair[0]}=${pair[1]}` : `&${pair[0]}=${pair[1]}`
  }
  return out
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
  return normalizePairs(toPairs(params))
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

/** Base string parts plus the decoded query pairs, for callers that must vet the query's names. */
export interface BuiltBaseString extends BaseStringParts {
  readonly queryPairs: ReadonlyArray<ParamPair>
}

/** Builds the base string from flattened body pairs and protocol pairs; query pairs come from the URL. */
export function buildBaseString(
  method: string,
  url: string,
  bodyPairs: ReadonlyArray<ParamPair>,
  protocolPairs: ReadonlyArray<ParamPair>
): BuiltBaseString {
  if (typeof method !== "string" || !METHOD.test(method)) throw new InvalidRequestError("method", "invalid-value")
  const { baseUri, query } = splitUrl(url)
  const queryPairs = parseQuery(query)
  const all = queryPairs.length === 0 && protocolPairs.length === 0
    ? bodyPairs
    : [...queryPairs, ...bodyPairs, ...protocolPairs]
  const normalizedParameters = normalizePairs(all)
  return {
    baseStringUri: baseUri,
    normalizedParameters,
    baseString: `${method.toUpperCase()}&${percentEncode(baseUri)}&${percentEncode(normalizedParameters)}`,
    queryPairs
  }
}

/** The base string from a split base string URI and the complete, final parameter list. */
export function baseStringOf(method: string, baseUri: string, pairs: ReadonlyArray<ParamPair>): string {
  if (typeof method !== "string" || !METHOD.test(method)) throw new InvalidRequestError("method", "invalid-value")
  return `${method.toUpperCase()}&${percentEncode(baseUri)}&${percentEncode(normalizePairs(pairs))}`
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
  return buildBaseString(method, url, toPairs(params), []).baseString
}
