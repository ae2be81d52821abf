/**
 * `paykit verify-callback <query-or-url> --key K [--key K2 ...]`: checks a callback's (or final
 * redirect's) `control` = SHA-1(status + orderid + client_orderid + key), in constant time through
 * `@paykit/signing`. During a key rotation several `--key`s (current first) are accepted and the
 * verdict says which one matched, by its index, never the key. The other fields are claims the
 * control does not cover (docs/decisions.md#19-callbacks-vouch-only-for-what-is-signed).
 *
 * @packageDocumentation
 */
import { verifyCallbackControlWithKeys } from "@paykit/signing"
import { Redacted } from "../effect-free"
import { commonOptions, parseCommandLine, renderHelp, type OptionSpec } from "../args"
import { CheckFailed, UsageError } from "../errors"
import { ExitCode, type CliIo, type ExitCodeValue } from "../io"
import { controlKeys, keyOptions, ordinal } from "../keys"
import { isCardField, maskCardValue } from "../oauth"
import { json, shown, table } from "../output"

const options = {
  key: {
    ...keyOptions.key,
    repeatable: true,
    help: "a merchant control key; during a key rotation give each, current first (prefer the environment variable or --key-file: arguments show in process lists)"
  },
  "key-file": { ...keyOptions["key-file"], repeatable: true, help: "read a control key from FILE (surrounding whitespace ignored); one file per key during a rotation" },
  ...commonOptions
} as const satisfies Record<string, OptionSpec>

/** Help of `paykit verify-callback`. */
export const verifyCallbackHelp = renderHelp({
  usage: "paykit verify-callback QUERY_OR_URL [--key K [--key K2 ...]] [--json]",
  summary: "Check the control of a callback or final redirect the gateway sent: SHA-1(status + orderid + client_orderid + control key).",
  description: `QUERY_OR_URL is the callback's full URL (quote it: it holds &) or just its query string.
Exit 0 when the control matches; 1 when it does not, is missing or malformed, a signed field is
missing, a field appears twice, or merchant_order differs from client_orderid. Only status, orderid
and client_orderid are signed: confirm amount, type and the rest with paykit status.
During a key rotation give every key the gateway may sign with, current first: the verdict says
which one matched by its index (0 the first --key), never the key.`,
  options,
  examples: [
    `paykit verify-callback 'https://shop.example/callback?status=approved&orderid=1000001&client_orderid=o-1&type=sale&amount=10.00&control=…' --key K`,
    `paykit verify-callback 'status=approved&orderid=1000001&client_orderid=o-1&control=…' --key NEW_KEY --key OLD_KEY`
  ]
})

const SIGNED = ["status", "orderid", "client_orderid"] as const

/** Runs `paykit verify-callback`. */
export async function runVerifyCallback(argv: ReadonlyArray<string>, io: CliIo): Promise<ExitCodeValue> {
  const parsed = parseCommandLine("verify-callback", argv, options)
  if (parsed.booleans.has("help")) {
    io.stdout(verifyCallbackHelp)
    return ExitCode.ok
  }
  if (parsed.positionals.length !== 1) {
    throw new UsageError({ argument: "QUERY_OR_URL", rule: parsed.positionals.length === 0 ? "missing; give the callback URL or its query string (quoted)" : `give exactly one (got ${parsed.positionals.length}; quote a URL that holds &)` })
  }
  const input = parsed.positionals[0]!
  const keys = controlKeys(parsed, io)
  if (keys.length === 0) {
    throw new UsageError({ argument: "--key", rule: "the callback control ends with the merchant control key; give --key K, --key-file FILE or set PAYKIT_CONTROL_KEY" })
  }
  const query = /^[a-z][a-z0-9+.-]*:\/\//i.test(input) ? queryOfUrl(input) : input.replace(/^\?/, "")
  const pairs = [...new URLSearchParams(query)]
  const fields: Record<string, string> = {}
  const problems: Array<string> = []
  for (const [name, value] of pairs) {
    if (Object.prototype.hasOwnProperty.call(fields, name)) problems.push(`${name} appears twice (refused: parameter pollution)`)
    else fields[name] = value
  }
  for (const name of SIGNED) if (fields[name] === undefined) problems.push(`${name} is missing (it is signed)`)
  if (fields["merchant_order"] !== undefined && fields["client_orderid"] !== undefined && fields["merchant_order"] !== fields["client_orderid"]) {
    problems.push("merchant_order differs from the signed client_orderid")
  }
  let verdict: "valid" | "missing" | "malformed" | "mismatch" | "not checked" = "not checked"
  let keyIndex: number | undefined
  if (SIGNED.every((n) => fields[n] !== undefined)) {
    const result = verifyCallbackControlWithKeys(
      { status: fields["status"]!, orderid: fields["orderid"]!, client_orderid: fields["client_orderid"]! },
      fields["control"],
      keys.map((key) => Redacted.value(key))
    )
    verdict = result.ok ? "valid" : result.reason
    if (result.ok) keyIndex = result.keyIndex
    else problems.unshift(`control ${result.reason}${result.reason === "mismatch" ? ` (${keys.length > 1 ? `none of the ${keys.length} keys` : "wrong key"}, or a signed field was changed)` : result.reason === "malformed" ? " (not 40 hex digits)" : ""}`)
  }
  const claims = Object.entries(fields)
    .filter(([name]) => !(SIGNED as ReadonlyArray<string>).includes(name) && name !== "control")
    .map(([name, value]) => [name, isCardField(name) ? maskCardValue(name, value) : value] as const)
  const ok = problems.length === 0
  if (parsed.booleans.has("json")) {
    io.stdout(json({ ok, control: verdict, keyIndex: keyIndex ?? null, keys: keys.length, problems, signed: Object.fromEntries(SIGNED.map((n) => [n, fields[n] ?? null])), claims: Object.fromEntries(claims) }))
  } else {
    io.stdout([
      `callback control: ${ok ? "valid" : "INVALID"}${keyIndex !== undefined && keys.length > 1 ? ` (key index ${keyIndex}: the ${ordinal(keyIndex + 1)} of ${keys.length} keys)` : ""}`,
      ...problems.map((p) => `  ✗ ${p}`),
      "",
      "signed (status + orderid + client_orderid + control key):",
      table(["field", "value"], SIGNED.map((n) => [n, shown(fields[n])])),
      "",
      "claims the control does not cover (confirm them with paykit status):",
      claims.length === 0 ? "  (none)" : table(["field", "value"], claims.map(([n, v]) => [n, shown(v)])),
      ""
    ].join("\n"))
  }
  if (!ok) throw new CheckFailed({ reason: `callback not verified: ${problems.join("; ")}`, details: { printed: true } })
  return ExitCode.ok
}

function queryOfUrl(input: string): string {
  try {
    return new URL(input).search.replace(/^\?/, "")
  } catch {
    throw new UsageError({ argument: "QUERY_OR_URL", rule: "looks like a URL but does not parse as one" })
  }
}
