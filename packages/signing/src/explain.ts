/**
 * How a signature is made, as data: the parts of a `control` digest input in digest order, and the
 * parameters of an OAuth 1.0a base string in base-string order. Built on this package's own
 * control schemes, minor units, base string URI and RFC 3986 encoding, so an explanation shows what
 * the signer signs. Formatting is the caller's (the CLI's `paykit explain`, the simulator's test
 * mode); nothing here holds a key or a digest.
 *
 * @packageDocumentation
 */
import type { ControlCode, OperationId } from "@paykit/contracts/operations"
import { toMinorUnits, type MinorUnits } from "./minor-units"
import { parseQuery, splitUrl, type ParamPair } from "./oauth/params"
import { percentEncode } from "./oauth/percent"
import { controlSchemeOf } from "./operation-control"

/** How `amount` enters a control digest: its minor units, or why it cannot. */
export type ControlAmount =
  | {
      /** The amount converted. */
      readonly ok: true
      /** The currency the amount was converted in. */
      readonly currency: string
      /** The minor-units mode used (cents or ISO 4217). */
      readonly minorUnits: MinorUnits
      /** The integer string that enters the digest. */
      readonly minor: string
    }
  | {
      /** The amount could not be converted. */
      readonly ok: false
      /** `undefined` when no currency was given (minor units need one). */
      readonly currency: string | undefined
      /** The minor-units mode asked for (cents or ISO 4217). */
      readonly minorUnits: MinorUnits
      /** The typed error of `toMinorUnits`, when a currency was given. */
      readonly error?: unknown
    }

/** One field of a control scheme and what it adds to the digest input. */
export interface ControlExplanationPart {
  /** The scheme's field name. */
  readonly field: string
  /** `path` for the URL's endpoint (or group) id, `body` for a form field. */
  readonly source: "path" | "body"
  /** The value as given; `undefined` when not given. */
  readonly given: string | undefined
  /** The text the field adds to the digest input: "" when not given or not convertible. */
  readonly inDigest: string
  /** For `amount` when given: its minor units. */
  readonly amount?: ControlAmount
}

/** A control digest's input, explained (the key that follows the parts is never part of it). */
export interface ControlExplanationData {
  /** The operation whose control is explained. */
  readonly operationId: OperationId
  /** C1–C8. */
  readonly code: ControlCode
  /** The parts in digest order. */
  readonly parts: ReadonlyArray<ControlExplanationPart>
  /** The concatenation of the parts, without the key. */
  readonly concatenationWithoutKey: string
  /** The minor-units mode, when the scheme has an amount. */
  readonly minorUnits: MinorUnits | undefined
}

/** Inputs of {@link explainControl} besides the form values. */
export interface ControlExplainOptions {
  /** The URL's endpoint (or group) id, for the schemes that include it. */
  readonly endpointId?: string | undefined
  /** How `amount` enters the digest (default `cents`, DESIGN decision 2). */
  readonly minorUnits?: MinorUnits | undefined
}

/**
 * The parts of the control digest input of a control-signed operation, in digest order.
 *
 * @example explainControl("SALE", { client_orderid: "1", amount: "10.42", currency: "USD", email: "a@b.c" }, { endpointId: "1111" }).concatenationWithoutKey // → "1111110421a@b.c"
 * @throws {NotControlSignedError} when the operation is not control-signed.
 */
export function explainControl(
  operationId: OperationId,
  values: Readonly<Record<string, string | undefined>>,
  options: ControlExplainOptions = {}
): ControlExplanationData {
  const scheme = controlSchemeOf(operationId)
  const minorUnits: MinorUnits = options.minorUnits ?? "cents"
  const currency = values["currency"]
  const parts = scheme.fields.map((field): ControlExplanationPart => {
    if (field === "endpointId") return { field, source: "path", given: options.endpointId, inDigest: options.endpointId ?? "" }
    const given = values[field]
    if (given === undefined || field !== "amount") return { field, source: "body", given, inDigest: given ?? "" }
    if (currency === undefined) return { field, source: "body", given, inDigest: "", amount: { ok: false, currency, minorUnits } }
    try {
      const minor = toMinorUnits(given, currency, { minorUnits })
      return { field, source: "body", given, inDigest: minor, amount: { ok: true, currency, minorUnits, minor } }
    } catch (error) {
      return { field, source: "body", given, inDigest: "", amount: { ok: false, currency, minorUnits, error } }
    }
  })
  return {
    operationId,
    code: scheme.code,
    parts,
    concatenationWithoutKey: parts.map((p) => p.inDigest).join(""),
    minorUnits: scheme.fields.includes("amount") ? minorUnits : undefined
  }
}

/** One parameter of an OAuth signature base string. */
export interface OAuthExplanationParameter {
  /** `body` (form field), `query` (the URL's query) or `oauth` (a protocol parameter). */
  readonly source: "body" | "query" | "oauth"
  /** The name, decoded. */
  readonly name: string
  /** The value, decoded. */
  readonly value: string
  /** `enc(name)=enc(value)` (RFC 3986 encoding) as the normalized parameters have it. */
  readonly encoded: string
}

/** Where the parameters of a base string come from. */
export interface OAuthParameterSources {
  /** The form body, in sent order, duplicates kept. */
  readonly body?: ReadonlyArray<ParamPair> | undefined
  /** The URL's query, decoded. */
  readonly query?: ReadonlyArray<ParamPair> | undefined
  /** The protocol parameters (`oauth_signature` and `realm` are never signed and are skipped). */
  readonly oauth?: ReadonlyArray<ParamPair> | undefined
}

/**
 * The parameters of a base string in RFC 5849 §3.4.1.3.2 order: sorted by encoded name, then by
 * encoded value (byte order).
 */
export function explainOAuthParameters(sources: OAuthParameterSources): ReadonlyArray<OAuthExplanationParameter> {
  const out: Array<OAuthExplanationParameter & { readonly encName: string; readonly encValue: string }> = []
  const push = (source: OAuthExplanationParameter["source"], pairs: ReadonlyArray<ParamPair> | undefined) => {
    for (const [name, value] of pairs ?? []) {
      if (source === "oauth" && (name === "oauth_signature" || name === "realm")) continue
      const encName = percentEncode(name)
      const encValue = percentEncode(value)
      out.push({ source, name, value, encoded: `${encName}=${encValue}`, encName, encValue })
    }
  }
  push("body", sources.body)
  push("query", sources.query)
  push("oauth", sources.oauth)
  out.sort((a, b) => (a.encName < b.encName ? -1 : a.encName > b.encName ? 1 : a.encValue < b.encValue ? -1 : a.encValue > b.encValue ? 1 : 0))
  return out.map(({ source, name, value, encoded }) => ({ source, name, value, encoded }))
}

/** An OAuth 1.0a signature base string, explained. */
export interface OAuthExplanationData {
  /** The HTTP method, upper case. */
  readonly method: string
  /** RFC 5849 §3.4.1.2: scheme and host lower case, no default port, no query. */
  readonly baseStringUri: string
  /** In base-string order, the URL's query included. */
  readonly parameters: ReadonlyArray<OAuthExplanationParameter>
  /** The parameters joined with `&` (RFC 5849 §3.4.1.3.2). */
  readonly normalizedParameters: string
  /** `METHOD&enc(base string URI)&enc(normalized parameters)`: what is signed. */
  readonly baseString: string
}

/** Inputs of {@link explainOAuth}. */
export interface OAuthExplainRequest {
  /** Default `POST`, the payment API's only method. */
  readonly method?: string | undefined
  /** The full request URL; its query is signed too. */
  readonly url: string
  /** The form body, in sent order. */
  readonly body?: ReadonlyArray<ParamPair> | undefined
  /** The protocol parameters (from the `Authorization` header). */
  readonly oauth?: ReadonlyArray<ParamPair> | undefined
}

/**
 * The signature base string of a request and each parameter in it, with where it came from.
 *
 * @throws {InvalidRequestError} (`invalid-url`) when the URL is not an absolute http(s) URL, or
 *   for a malformed query.
 */
export function explainOAuth(request: OAuthExplainRequest): OAuthExplanationData {
  const { baseUri, query } = splitUrl(request.url)
  const parameters = explainOAuthParameters({ body: request.body, query: parseQuery(query), oauth: request.oauth })
  const normalizedParameters = parameters.map((p) => p.encoded).join("&")
  const method = (request.method ?? "POST").toUpperCase()
  return {
    method,
    baseStringUri: baseUri,
    parameters,
    normalizedParameters,
    baseString: `${method}&${percentEncode(baseUri)}&${percentEncode(normalizedParameters)}`
  }
}
