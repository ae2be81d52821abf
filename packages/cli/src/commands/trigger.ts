/**
 * `paykit trigger <chargeback|decline-next|fail-callback>`: drives a PayKit simulator through its
 * test routes (`POST /__sim/faults`, `POST /__sim/decline-next`, `POST /__sim/orders/{orderid}/chargeback`).
 * A refusal ends with the simulator's reason, never with a pretend success.
 *
 * @packageDocumentation
 */
import { operationIds } from "@paykit/contracts/operations"
import { commonOptions, optionValue, parseCommandLine, renderHelp, type OptionSpec } from "../args"
import { CheckFailed, UsageError } from "../errors"
import { ExitCode, type CliIo, type ExitCodeValue } from "../io"
import { findOperation } from "../operation"
import { networkCause } from "../network"
import { json } from "../output"

const options = {
  "base-url": { type: "string", value: "URL", env: "PAYKIT_SIM_URL", help: "the simulator's URL (default http://127.0.0.1:4010, paykit-sim's default)" },
  count: { type: "string", value: "N", help: "fail-callback: how many deliveries fail; decline-next: how many payments are declined (default 1)" },
  operation: { type: "string", value: "OP", help: "fail-callback: only callbacks of orders made by OP (e.g. SALE); decline-next: only payments of OP (SALE, PREAUTH, REBILL, SALEFORM, PREAUTHFORM, PAYMENTFORM); default any" },
  merchant: { type: "string", value: "LOGIN", help: "decline-next: only this merchant's payments (its login); default any merchant" },
  orderid: { type: "string", value: "Y", help: "chargeback: the order to charge back (required)" },
  amount: { type: "string", value: "X", help: "chargeback: the amount in major units (default: all that is left to charge back)" },
  ...commonOptions
} as const satisfies Record<string, OptionSpec>

/** Triggers this CLI knows, and whether the simulator has a test route for each. */
export const TRIGGERS = {
  "fail-callback": { supported: true, what: "the next N callback deliveries fail as if the merchant's endpoint were down (the simulator retries them with backoff)" },
  "decline-next": { supported: true, what: "decline the next N payments whatever the card or amount (\"Do not honor\", code 05; POST /__sim/decline-next)" },
  chargeback: { supported: true, what: "charge an approved, settled order back now (a callback of type chargeback; POST /__sim/orders/{orderid}/chargeback)" }
} as const

/** Help of `paykit trigger`. */
export const triggerHelp = renderHelp({
  usage: "paykit trigger <chargeback|decline-next|fail-callback> [--base-url URL] [--count N] [--operation OP] [--merchant LOGIN] [--orderid Y] [--amount X] [--json]",
  summary: "Make something happen in a PayKit simulator (paykit-sim) through its test routes.",
  description: Object.entries(TRIGGERS).map(([name, t]) => `  ${name.padEnd(13)} ${t.what}${t.supported ? "" : " (no test route in the simulator yet: exits 1 saying so)"}`).join("\n") +
    "\nThe test routes exist only on a simulator; a gateway answers them 404.",
  options,
  examples: [
    "paykit trigger fail-callback --count 3 --operation SALE --base-url http://127.0.0.1:4010",
    "paykit trigger chargeback --orderid 1000001 --amount 4.00",
    "paykit trigger decline-next --operation SALE"
  ]
})

/** Runs `paykit trigger`. */
export async function runTrigger(argv: ReadonlyArray<string>, io: CliIo): Promise<ExitCodeValue> {
  const parsed = parseCommandLine("trigger", argv, options)
  if (parsed.booleans.has("help")) {
    io.stdout(triggerHelp)
    return ExitCode.ok
  }
  const [name, ...rest] = parsed.positionals
  if (name === undefined) throw new UsageError({ argument: "TRIGGER", rule: `missing; one of ${Object.keys(TRIGGERS).join(", ")}` })
  if (rest.length > 0) throw new UsageError({ argument: rest[0]!, rule: "trigger takes one trigger name" })
  if (!Object.prototype.hasOwnProperty.call(TRIGGERS, name)) throw new UsageError({ argument: "TRIGGER", rule: `"${name}" is not a trigger; one of ${Object.keys(TRIGGERS).join(", ")}` })
  const base = (optionValue(parsed, "base-url", options["base-url"], io.env) ?? "http://127.0.0.1:4010").replace(/\/+$/, "")
  if (name === "chargeback") return chargeback(parsed, base, io)
  if (name === "decline-next") return declineNext(parsed, base, io)
  const countText = parsed.strings.get("count")?.[0] ?? "1"
  if (!/^[1-9][0-9]*$/.test(countText)) throw new UsageError({ argument: "--count", rule: "must be a positive integer" })
  const opName = parsed.strings.get("operation")?.[0]
  const operation = opName === undefined ? "*" : findOperationOrUsage(opName)
  const rule = { kind: "callback-fail", operation, count: Number(countText) }
  let response: Response
  try {
    response = await io.fetch(`${base}/__sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rule), signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    const cause = networkCause(error)
    throw new CheckFailed({ reason: `could not reach the simulator at ${base} (${cause}); start it with npx paykit-sim or give --base-url` })
  }
  const body = await response.text()
  if (response.status === 404) throw new CheckFailed({ reason: `${base} has no POST /__sim/faults (HTTP 404): not a PayKit simulator, or its test routes are not exposed` })
  if (!response.ok) throw new CheckFailed({ reason: `the simulator refused the fault rule: HTTP ${response.status} ${body.slice(0, 200)}` })
  const what = `the next ${rule.count} callback deliver${rule.count === 1 ? "y" : "ies"}${operation === "*" ? "" : ` of ${operation} orders`} will fail (merchant endpoint "down"); the simulator retries with backoff`
  io.stdout(parsed.booleans.has("json") ? json({ ok: true, trigger: name, rule, simulator: base }) : `${what}\n`)
  return ExitCode.ok
}

async function chargeback(parsed: ReturnType<typeof parseCommandLine>, base: string, io: CliIo): Promise<ExitCodeValue> {
  const orderid = parsed.strings.get("orderid")?.[0]
  if (orderid === undefined) throw new UsageError({ argument: "--orderid", rule: "chargeback needs the order to charge back (--orderid Y)" })
  if (!/^[0-9]{1,19}$/.test(orderid)) throw new UsageError({ argument: "--orderid", rule: "must be the gateway's numeric orderid" })
  const amount = parsed.strings.get("amount")?.[0]
  if (amount !== undefined && !/^[0-9]+(\.[0-9]+)?$/.test(amount)) throw new UsageError({ argument: "--amount", rule: "must be a decimal amount in major units, e.g. 4.00" })
  let response: Response
  try {
    response = await io.fetch(`${base}/__sim/orders/${orderid}/chargeback`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(amount === undefined ? {} : { amount }),
      signal: AbortSignal.timeout(10_000)
    })
  } catch (error) {
    throw new CheckFailed({ reason: `could not reach the simulator at ${base} (${networkCause(error)}); start it with npx paykit-sim or give --base-url` })
  }
  const text = await response.text()
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    // not JSON: reported below with the status
  }
  if (!response.ok) {
    const why = typeof body["error"] === "string" ? `${String(body["code"] ?? "")}: ${body["error"]}` : text.slice(0, 200)
    throw new CheckFailed({ reason: `the simulator refused the chargeback of order ${orderid}: HTTP ${response.status} ${why}` })
  }
  const line = `order ${orderid} charged back ${String(body["amount"])} ${String(body["currency"])}: the simulator sends a callback of type chargeback`
  io.stdout(parsed.booleans.has("json") ? json({ ok: true, trigger: "chargeback", orderid, amount: body["amount"], currency: body["currency"], simulator: base }) : `${line}\n`)
  return ExitCode.ok
}

async function declineNext(parsed: ReturnType<typeof parseCommandLine>, base: string, io: CliIo): Promise<ExitCodeValue> {
  const countText = parsed.strings.get("count")?.[0] ?? "1"
  if (!/^[1-9][0-9]{0,5}$/.test(countText)) throw new UsageError({ argument: "--count", rule: "must be a positive integer" })
  const opName = parsed.strings.get("operation")?.[0]
  const operation = opName === undefined ? undefined : findOperationOrUsage(opName)
  const merchant = parsed.strings.get("merchant")?.[0]
  const rule = { ...(operation === undefined ? {} : { operation }), ...(merchant === undefined ? {} : { merchant }), count: Number(countText) }
  let response: Response
  try {
    response = await io.fetch(`${base}/__sim/decline-next`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(rule), signal: AbortSignal.timeout(10_000) })
  } catch (error) {
    throw new CheckFailed({ reason: `could not reach the simulator at ${base} (${networkCause(error)}); start it with npx paykit-sim or give --base-url` })
  }
  const text = await response.text()
  let body: Record<string, unknown> = {}
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    // not JSON: reported below with the status
  }
  if (response.status === 404) throw new CheckFailed({ reason: `${base} has no POST /__sim/decline-next (HTTP 404): not a PayKit simulator, one older than decline-next, or its test routes are not exposed` })
  if (!response.ok) throw new CheckFailed({ reason: `the simulator refused decline-next: HTTP ${response.status} ${typeof body["error"] === "string" ? body["error"] : text.slice(0, 200)}` })
  const what = `the next ${rule.count === 1 ? "payment" : `${rule.count} payments`}${operation === undefined ? "" : ` of ${operation}`}${merchant === undefined ? "" : ` of merchant ${merchant}`} will be declined (Do not honor, code 05) whatever the card`
  io.stdout(parsed.booleans.has("json") ? json({ ok: true, trigger: "decline-next", rule, pending: body["pending"], simulator: base }) : `${what}\n`)
  return ExitCode.ok
}

function findOperationOrUsage(name: string): string {
  try {
    return findOperation(name)
  } catch {
    throw new UsageError({ argument: "--operation", rule: `"${name}" is not an operation; one of ${operationIds.join(", ")}` })
  }
}
