/**
 * The `paykit` dispatcher: picks the command, runs it, and turns every error into one line on
 * standard error (and, with `--json`, one JSON document on standard output) and an exit code.
 *
 * @packageDocumentation
 */
// Each command is loaded when it runs (`paykit sign` loads neither the network commands nor what
// they import).
const runSign = async (argv: ReadonlyArray<string>, io: CliIo, explain: boolean) => (await import("./commands/sign")).runSign(argv, io, explain)
const runStatus = async (argv: ReadonlyArray<string>, io: CliIo) => (await import("./commands/status")).runStatus(argv, io)
const runTrigger = async (argv: ReadonlyArray<string>, io: CliIo) => (await import("./commands/trigger")).runTrigger(argv, io)
const runVerifyCallback = async (argv: ReadonlyArray<string>, io: CliIo) => (await import("./commands/verify-callback")).runVerifyCallback(argv, io)
import { CheckFailed, UsageError } from "./errors"
import { ExitCode, processIo, type CliIo, type ExitCodeValue } from "./io"
import { json } from "./output"

const COMMANDS: Readonly<Record<string, { readonly summary: string; readonly run: (argv: ReadonlyArray<string>, io: CliIo) => Promise<ExitCodeValue> }>> = {
  sign: { summary: "print the control digest or OAuth Authorization header of a request", run: (argv, io) => runSign(argv, io, false) },
  explain: { summary: "the same, with each field's part of the digest or each parameter of the OAuth base string", run: (argv, io) => runSign(argv, io, true) },
  "verify-callback": { summary: "check the control of a callback or final redirect", run: runVerifyCallback },
  status: { summary: "ask a gateway or simulator for an order's status", run: runStatus },
  trigger: { summary: "make a simulator fail callbacks (and, later, decline or charge back)", run: runTrigger }
}

/** Help of `paykit` itself. */
export const mainHelp = `Usage: paykit <command> [arguments] [--json] [--help]

PayKit's command line for the card-payment gateway: sign and explain requests, verify callbacks,
query status, and drive the PayKit simulator.

Commands:
${Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(16)} ${c.summary}`).join("\n")}

Run paykit <command> --help for a command's arguments. Secrets may come from the environment:
PAYKIT_CONTROL_KEY, PAYKIT_PRIVATE_KEY_FILE (and PAYKIT_LOGIN, PAYKIT_ENDPOINT_ID, PAYKIT_BASE_URL).
Exit codes: 0 ok, 1 verification failed or the remote side refused, 2 usage error.
`

/**
 * Runs `paykit` with `argv` (the arguments after the program name) and resolves to its exit code;
 * output goes to `io` (the process's streams by default). Never throws.
 *
 * @example
 * const code = await run(["sign", "STATUS", "login=paykit-test", "client_orderid=o-1", "--key", "K"])
 */
export async function run(argv: ReadonlyArray<string>, io: CliIo = processIo()): Promise<ExitCodeValue> {
  const [name, ...rest] = argv
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(mainHelp)
    return name === undefined ? ExitCode.usage : ExitCode.ok
  }
  const command = COMMANDS[name]
  const asJson = rest.includes("--json")
  if (command === undefined || !Object.prototype.hasOwnProperty.call(COMMANDS, name)) {
    return fail(io, asJson, "paykit", new UsageError({ argument: name, rule: `not a command; one of ${Object.keys(COMMANDS).join(", ")} (see paykit --help)` }))
  }
  try {
    return await command.run(rest, io)
  } catch (error) {
    return fail(io, asJson, `paykit ${name}`, error)
  }
}

function fail(io: CliIo, asJson: boolean, prefix: string, error: unknown): ExitCodeValue {
  if (error instanceof UsageError) {
    io.stderr(`${prefix}: ${error.message}\n`)
    if (asJson) io.stdout(json({ ok: false, error: { kind: "usage", argument: error.argument, rule: error.rule } }))
    return ExitCode.usage
  }
  if (error instanceof CheckFailed) {
    io.stderr(`${prefix}: ${error.message}\n`)
    if (asJson && error.details?.["printed"] !== true) io.stdout(json({ ok: false, error: { kind: "failed", reason: error.reason } }))
    return ExitCode.failed
  }
  // A bug, not an input problem: say so in one line. Signing errors never hold secrets.
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
  io.stderr(`${prefix}: unexpected error: ${message}\n`)
  if (asJson) io.stdout(json({ ok: false, error: { kind: "internal", reason: message } }))
  return ExitCode.failed
}
