/**
 * `paykit status`: asks a gateway (or the simulator) for an order's status: a form POST to
 * `{base}/api/v2/status/{endpointId}` signed with control C7 = SHA-1(login + client_orderid +
 * orderid + key), and prints the reply.
 *
 * @packageDocumentation
 */
import { operations } from "@paykit/contracts/operations"
import { signControl } from "@paykit/signing"
import { Redacted } from "../effect-free"
import { commonOptions, optionValue, parseCommandLine, renderHelp, type OptionSpec } from "../args"
import { CheckFailed, UsageError } from "../errors"
import { ExitCode, type CliIo, type ExitCodeValue } from "../io"
import { keyOptions, requireControlKey } from "../keys"
import { networkCause } from "../network"
import { json, table } from "../output"
import { signingInputError } from "../signing-errors"

const options = {
  "client-orderid": { type: "string", value: "X", help: "the merchant's order id (client_orderid); required" },
  orderid: { type: "string", value: "Y", help: "the gateway's order id, when known" },
  "base-url": { type: "string", value: "URL", env: "PAYKIT_BASE_URL", help: "the gateway's base URL, e.g. http://127.0.0.1:4010 for paykit-sim" },
  login: { type: "string", value: "L", env: "PAYKIT_LOGIN", help: "the merchant login" },
  ...keyOptions,
  "endpoint-id": { type: "string", value: "N", env: "PAYKIT_ENDPOINT_ID", help: "the endpoint (or group) id" },
  "timeout-ms": { type: "string", value: "MS", help: "give up after MS milliseconds (default 30000)" },
  ...commonOptions
} as const satisfies Record<string, OptionSpec>

/** Help of `paykit status`. */
export const statusHelp = renderHelp({
  usage: "paykit status --client-orderid X [--orderid Y] --base-url URL --login L --key K --endpoint-id N [--json]",
  summary: "Ask the gateway for an order's current status (the STATUS operation, control C7).",
  description: `Exit 0 when the gateway answered with a status (whatever it is: approved, declined, processing,
...); 1 when it refused the request (validation-error, error, HTTP error) or could not be reached.`,
  options,
  examples: ["paykit status --client-orderid shop-1 --base-url http://127.0.0.1:4010 --login paykit-test --key F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F --endpoint-id 1001"]
})

const SHOWN = ["type", "status", "paynet-order-id", "merchant-order-id", "transaction-type", "amount", "currency", "serial-number", "error-code", "error-message", "redirect-to", "bin", "last-four-digits"]

function required(value: string | undefined, option: string, rule: string): string {
  if (value === undefined || value === "") throw new UsageError({ argument: option, rule })
  return value
}

/** Runs `paykit status`. */
export async function runStatus(argv: ReadonlyArray<string>, io: CliIo): Promise<ExitCodeValue> {
  const parsed = parseCommandLine("status", argv, options)
  if (parsed.booleans.has("help")) {
    io.stdout(statusHelp)
    return ExitCode.ok
  }
  if (parsed.positionals.length > 0) throw new UsageError({ argument: parsed.positionals[0]!, rule: "status takes no positional arguments (see paykit status --help)" })
  const get = (name: keyof typeof options) => optionValue(parsed, name, options[name] as OptionSpec, io.env)
  const client_orderid = required(get("client-orderid"), "--client-orderid", "required: the merchant's order id to look up")
  const orderid = get("orderid")
  const baseUrl = required(get("base-url"), "--base-url", "required: the gateway's base URL (or set PAYKIT_BASE_URL)")
  const login = required(get("login"), "--login", "required: the merchant login (or set PAYKIT_LOGIN)")
  const endpointId = required(get("endpoint-id"), "--endpoint-id", "required: the endpoint id (or set PAYKIT_ENDPOINT_ID)")
  if (!/^[0-9]+$/.test(endpointId)) throw new UsageError({ argument: "--endpoint-id", rule: "must be a decimal integer" })
  const timeoutText = get("timeout-ms") ?? "30000"
  const timeoutMs = Number(timeoutText)
  if (!/^[0-9]+$/.test(timeoutText) || timeoutMs <= 0) throw new UsageError({ argument: "--timeout-ms", rule: "must be a positive integer" })
  const key = requireControlKey(parsed, io, "the status control (C7) ends with the merchant control key")
  let url: URL
  try {
    url = new URL(baseUrl.replace(/\/+$/, "") + operations.STATUS.path.replace("{endpointId}", endpointId))
  } catch {
    throw new UsageError({ argument: "--base-url", rule: `"${baseUrl}" is not a URL` })
  }
  const fields: Record<string, string> = { login, client_orderid, ...(orderid === undefined ? {} : { orderid }) }
  let control: string
  try {
    control = signControl("STATUS", fields, { key: Redacted.value(key), endpointId })
  } catch (error) {
    throw signingInputError(error, {})
  }
  let response: Response
  try {
    response = await io.fetch(url, {
      method: "POST",
      headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, control }).toString(),
      signal: AbortSignal.timeout(timeoutMs)
    })
  } catch (error) {
    const cause = networkCause(error)
    throw new CheckFailed({ reason: `could not reach ${url.origin} (${cause})` })
  }
  const text = await response.text()
  let reply: Record<string, unknown>
  try {
    reply = JSON.parse(text) as Record<string, unknown>
  } catch {
    throw new CheckFailed({ reason: `${url} answered HTTP ${response.status} with a body that is not JSON (${text.slice(0, 80).replace(/\s+/g, " ")})` })
  }
  const refused = response.status !== 200 || reply["type"] === "validation-error" || reply["type"] === "error"
  if (parsed.booleans.has("json")) {
    io.stdout(json({ ok: !refused, request: { url: url.toString(), fields }, httpStatus: response.status, reply }))
  } else {
    const rows = SHOWN.filter((k) => reply[k] !== undefined && reply[k] !== "").map((k) => [k, String(reply[k])])
    io.stdout(`${url} → HTTP ${response.status}\n${table(["field", "value"], rows)}\n`)
  }
  if (refused) {
    throw new CheckFailed({
      reason: `the gateway refused the status request: HTTP ${response.status}${reply["error-code"] === undefined ? "" : `, ${String(reply["error-code"])}`}${reply["error-message"] === undefined ? "" : `: ${String(reply["error-message"])}`}`,
      details: { printed: true }
    })
  }
  return ExitCode.ok
}
