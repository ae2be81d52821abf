/**
 * `paykit sign` and `paykit explain`: the `control` of a control-signed operation, or the OAuth
 * `Authorization` header of an OAuth-signed one; `explain` adds each field's part of the digest
 * or each parameter of the base string. Never the key.
 *
 * @packageDocumentation
 */
import { operations, type OperationId } from "@paykit/contracts/operations"
import type { ParamPair } from "@paykit/signing"
import { Redacted } from "../effect-free"
import { commonOptions, optionValue, parseCommandLine, renderHelp, type OptionSpec, type Parsed } from "../args"
import { explainControl, type ControlExplanation } from "../control"
import { UsageError } from "../errors"
import { ExitCode, type CliIo, type ExitCodeValue } from "../io"
import { keyOptions, readOrUsage, requireControlKey } from "../keys"
import { MINOR_UNITS_MODES, type MinorUnitsMode } from "../minor-units"
import { explainOAuth, maskOAuthExplanation, type OAuthExplanation } from "../oauth"
import { findOperation, operationUrl } from "../operation"
import { json, shown, table } from "../output"

const options = {
  ...keyOptions,
  "endpoint-id": { type: "string", value: "N", env: "PAYKIT_ENDPOINT_ID", help: "the endpoint (or group) id of the URL; part of the C2 and C6 digests" },
  "minor-units": { type: "string", value: "MODE", env: "PAYKIT_MINOR_UNITS", help: "how amount enters a control digest: cents (x 100 for every currency, the default) or iso4217 (x 10^exponent)" },
  login: { type: "string", value: "L", env: "PAYKIT_LOGIN", help: "the merchant login: the OAuth consumer key, and the login field of control digests when not given as login=..." },
  "private-key": { type: "string", value: "FILE", env: "PAYKIT_PRIVATE_KEY_FILE", help: "PEM private key for the RSA-SHA256 (v4) operations" },
  "base-url": { type: "string", value: "URL", env: "PAYKIT_BASE_URL", help: "the gateway's base URL; OAuth signs base URL + the operation's path" },
  url: { type: "string", value: "URL", help: "the full request URL to sign (instead of --base-url and the operation's path)" },
  nonce: { type: "string", value: "S", help: "oauth_nonce (default: random)" },
  timestamp: { type: "string", value: "T", help: "oauth_timestamp in seconds (default: now)" },
  realm: { type: "string", value: "R", help: "realm of the Authorization header (not signed)" },
  "oauth-token": { type: "string", value: "T", help: "oauth_token, for general RFC 5849 requests (the payment API uses none)" },
  "oauth-token-secret": { type: "string", value: "S", help: "the token's secret (HMAC key part)" },
  ...commonOptions
} as const satisfies Record<string, OptionSpec>

const explainOptions = {
  ...options,
  "show-card-data": { type: "boolean", help: "show card numbers and CVVs in full (masked by default)" }
} as const satisfies Record<string, OptionSpec>

const description = `OPERATION_ID is the interface's name (SALE, STATUS, PAYOUT, PAYOUT_V4_CHECK, ...) or the client
method (saleForm). Fields are the request's wire fields as name=value (values exactly as sent;
amount in major units, e.g. amount=10.42 currency=USD). A control-signed operation prints its
control; an OAuth operation prints the Authorization header: HMAC-SHA1 with the control key
(PAYOUT, PAYOUTFORM, PAN_ELIGIBILITY_SEND) or RSA-SHA256 with --private-key (the v4 operations).`

/** Help of `paykit sign`. */
export const signHelp = renderHelp({
  usage: "paykit sign OPERATION_ID name=value... [--key K] [--endpoint-id N] [--minor-units cents|iso4217] [--private-key FILE --base-url URL --login L] [--json]",
  summary: "Print the control digest or the OAuth Authorization header of a request.",
  description,
  options,
  examples: [
    "paykit sign SALE client_orderid=902B4FF5 amount=10.42 currency=USD email=john.smith@gmail.com --endpoint-id 1111 --key B17F59B4-A7DC-41B4-8FF9-37D986B43D20",
    "paykit sign PAYOUT_V4_CHECK client_orderid=p-1 amount=75.00 currency=EUR --login paykit-test --private-key key.pem --base-url http://127.0.0.1:4010 --endpoint-id 1001"
  ]
})

/** Help of `paykit explain`. */
export const explainHelp = renderHelp({
  usage: "paykit explain OPERATION_ID name=value... (the options of paykit sign) [--show-card-data] [--json]",
  summary: "Sign as paykit sign does and show how: each field's part of the digest (name, value given, value as it enters the digest, e.g. the amount in minor units), or each parameter of the OAuth base string and the base string itself. Never the key.",
  description,
  options: explainOptions,
  examples: [
    "paykit explain SALE client_orderid=902B4FF5 amount=10.42 currency=USD email=john.smith@gmail.com --endpoint-id 1111 --key B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
  ]
})

/** Splits `name=value` arguments into pairs, in order. */
export function fieldPairs(tokens: ReadonlyArray<string>): Array<ParamPair> {
  return tokens.map((token) => {
    const at = token.indexOf("=")
    if (at <= 0) throw new UsageError({ argument: token.length > 40 ? `${token.slice(0, 40)}…` : token, rule: "a field must be written name=value (e.g. amount=10.42)" })
    return [token.slice(0, at), token.slice(at + 1)] as const
  })
}

type Signed = { readonly kind: "control"; readonly x: ControlExplanation } | { readonly kind: "oauth"; readonly x: OAuthExplanation }

function minorUnitsOf(parsed: Parsed, io: CliIo): MinorUnitsMode {
  const mode = optionValue(parsed, "minor-units", options["minor-units"], io.env) ?? "cents"
  if (!(MINOR_UNITS_MODES as ReadonlyArray<string>).includes(mode)) {
    throw new UsageError({ argument: "--minor-units", rule: `"${mode}" is not a mode; one of cents (the default), iso4217` })
  }
  return mode as MinorUnitsMode
}

function signRequest(operationId: OperationId, pairs: ReadonlyArray<ParamPair>, parsed: Parsed, io: CliIo): Signed {
  const auth = operations[operationId].auth
  const endpointId = optionValue(parsed, "endpoint-id", options["endpoint-id"], io.env)
  const login = optionValue(parsed, "login", options.login, io.env)
  if (auth.scheme === "control") {
    const values: Record<string, string> = {}
    for (const [name, value] of pairs) {
      if (Object.prototype.hasOwnProperty.call(values, name)) throw new UsageError({ argument: name, rule: "given twice; the gateway refuses a field sent twice" })
      values[name] = value
    }
    if (values["login"] === undefined && login !== undefined && (auth.fields as ReadonlyArray<string>).includes("login")) values["login"] = login
    const key = requireControlKey(parsed, io, `the control of ${operationId} (${auth.code}) ends with the merchant control key`)
    return { kind: "control", x: explainControl(operationId, values, { key, endpointId, minorUnits: minorUnitsOf(parsed, io) }) }
  }
  if (login === undefined) throw new UsageError({ argument: "--login", rule: `${operationId} is OAuth-signed; its oauth_consumer_key is the merchant login: give --login L or set PAYKIT_LOGIN` })
  const url = operationUrl(operationId, { url: parsed.strings.get("url")?.[0], baseUrl: optionValue(parsed, "base-url", options["base-url"], io.env), endpointId })
  const tokenKey = parsed.strings.get("oauth-token")?.[0]
  const tokenSecret = parsed.strings.get("oauth-token-secret")?.[0]
  if (tokenSecret !== undefined && tokenKey === undefined) throw new UsageError({ argument: "--oauth-token-secret", rule: "needs --oauth-token" })
  const common = {
    url,
    consumerKey: login,
    nonce: parsed.strings.get("nonce")?.[0],
    timestamp: parsed.strings.get("timestamp")?.[0],
    realm: parsed.strings.get("realm")?.[0],
    token: tokenKey === undefined ? undefined : { key: tokenKey, secret: Redacted.make(tokenSecret ?? "") }
  }
  if (auth.scheme === "oauth-hmac-sha1") {
    const key = requireControlKey(parsed, io, `${operationId} is signed with OAuth HMAC-SHA1, keyed by the merchant control key`)
    return { kind: "oauth", x: explainOAuth(operationId, auth.scheme, pairs, { ...common, controlKey: key }) }
  }
  const file = optionValue(parsed, "private-key", options["private-key"], io.env)
  if (file === undefined) throw new UsageError({ argument: "--private-key", rule: `${operationId} is signed with OAuth RSA-SHA256; give --private-key FILE (a PEM private key) or set PAYKIT_PRIVATE_KEY_FILE` })
  const pem = Redacted.make(readOrUsage(io, file, "--private-key"))
  return { kind: "oauth", x: explainOAuth(operationId, auth.scheme, pairs, { ...common, privateKeyPem: pem, privateKeyFile: file }) }
}

/** Runs `paykit sign` (`explain` false) or `paykit explain`. */
export async function runSign(argv: ReadonlyArray<string>, io: CliIo, explain: boolean): Promise<ExitCodeValue> {
  const command = explain ? "explain" : "sign"
  const parsed = parseCommandLine(command, argv, explain ? explainOptions : options)
  if (parsed.booleans.has("help")) {
    io.stdout(explain ? explainHelp : signHelp)
    return ExitCode.ok
  }
  const [name, ...fields] = parsed.positionals
  const operationId = findOperation(name)
  const signed = signRequest(operationId, fieldPairs(fields), parsed, io)
  const asJson = parsed.booleans.has("json")
  if (!explain) {
    if (signed.kind === "control") {
      const x = signed.x
      io.stdout(asJson ? json({ operationId, scheme: "control", code: x.code, minorUnits: x.minorUnits ?? null, control: x.control }) : `${x.control}\n`)
    } else {
      const x = signed.x
      io.stdout(asJson
        ? json({ operationId, scheme: x.scheme, signatureMethod: x.signatureMethod, url: x.url, signature: x.signature, authorization: x.authorizationHeader })
        : `${x.authorizationHeader}\n`)
    }
    return ExitCode.ok
  }
  if (signed.kind === "control") {
    io.stdout(asJson ? json(signed.x) : controlText(signed.x))
  } else {
    const x = parsed.booleans.has("show-card-data") ? { ...signed.x, cardDataMasked: false } : maskOAuthExplanation(signed.x)
    io.stdout(asJson ? json(x) : oauthText(x))
  }
  return ExitCode.ok
}

function controlText(x: ControlExplanation): string {
  const rows = x.parts.map((p, i) => [String(i + 1), p.field, shown(p.given), p.given === undefined ? '""' : shown(p.inDigest), p.note ?? ""])
  return [
    `${x.operationId}: control ${x.code} = lowercase hex SHA-1 of these parts, in order, with no separators, then the control key`,
    "",
    table(["#", "field", "given", "enters the digest as", "note"], [...rows, [String(rows.length + 1), "(control key)", "(not shown)", "(not shown)", "appended last"]]),
    "",
    `digest input without the key: ${shown(x.concatenationWithoutKey)}`,
    ...(x.minorUnits === undefined ? [] : [`minor units: ${x.minorUnits}${x.minorUnits === "cents" ? " (amount x 100 for every currency)" : " (amount x 10^ISO 4217 exponent)"}`]),
    `control: ${x.control}`,
    ""
  ].join("\n")
}

function oauthText(x: OAuthExplanation & { readonly cardDataMasked: boolean }): string {
  return [
    `${x.operationId}: OAuth 1.0a ${x.signatureMethod} (RFC 5849); amounts are signed exactly as sent`,
    "",
    `request URL:      ${x.url}`,
    `base string URI:  ${x.baseStringUri}  (scheme and host lower case, default port dropped, no query)`,
    "",
    "parameters, sorted by encoded name, then encoded value:",
    table(["source", "name", "value", "encoded"], x.parameters.map((p) => [p.source, p.name, shown(p.value), p.encoded])),
    "",
    `normalized parameters: ${x.normalizedParameters}`,
    "",
    `base string: ${x.baseString}`,
    "",
    x.keyNote,
    `signature (Base64): ${x.signature}`,
    `Authorization: ${x.authorizationHeader}`,
    ...(x.cardDataMasked ? ["", "Card numbers and CVVs are masked above (the signature covers them in full); --show-card-data shows them."] : []),
    ""
  ].join("\n")
}
