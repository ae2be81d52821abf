/**
 * Command-line parsing on `node:util`'s `parseArgs` (strict: unknown options and missing values
 * are errors), with our own messages: each names the option and the rule, and points at `--help`.
 *
 * @packageDocumentation
 */
import { parseArgs } from "node:util"
import { UsageError } from "./errors"

/** One option of a command. */
export interface OptionSpec {
  /** A string option takes a value; a boolean one is a flag. */
  readonly type: "string" | "boolean"
  /** Placeholder of the value in help, e.g. `N` or `FILE`. */
  readonly value?: string
  /** One line of help. */
  readonly help: string
  /** An environment variable read when the option is absent. */
  readonly env?: string
  /** May be given more than once (the values are kept in order). */
  readonly repeatable?: boolean
}

/** The options every command takes. */
export const commonOptions = {
  json: { type: "boolean", help: "print one JSON object instead of text" },
  help: { type: "boolean", help: "show this help" }
} as const satisfies Record<string, OptionSpec>

/** What {@link parseCommandLine} returns. */
export interface Parsed {
  /** Each string option's values in order (an option given once has one). */
  readonly strings: ReadonlyMap<string, ReadonlyArray<string>>
  /** The flags given. */
  readonly booleans: ReadonlySet<string>
  /** The arguments that are not options, in order. */
  readonly positionals: ReadonlyArray<string>
}

/** Parses `argv` against `options`; throws {@link UsageError} naming the option at fault. */
export function parseCommandLine(command: string, argv: ReadonlyArray<string>, options: Readonly<Record<string, OptionSpec>>): Parsed {
  const config: Record<string, { type: "string" | "boolean"; multiple: boolean }> = {}
  for (const [name, spec] of Object.entries(options)) config[name] = { type: spec.type, multiple: spec.type === "string" }
  let result: ReturnType<typeof parseArgs>
  try {
    result = parseArgs({ args: [...argv], options: config, strict: true, allowPositionals: true })
  } catch (error) {
    throw usageFromParseArgs(command, error)
  }
  const strings = new Map<string, ReadonlyArray<string>>()
  const booleans = new Set<string>()
  for (const [name, value] of Object.entries(result.values)) {
    if (Array.isArray(value)) {
      if (value.length > 1 && options[name]?.repeatable !== true) {
        throw new UsageError({ argument: `--${name}`, rule: `given ${value.length} times; give it once` })
      }
      strings.set(name, value as Array<string>)
    } else if (value === true) booleans.add(name)
  }
  return { strings, booleans, positionals: result.positionals }
}

function usageFromParseArgs(command: string, error: unknown): UsageError {
  const code = (error as { code?: string }).code
  const message = error instanceof Error ? error.message : String(error)
  const option = /'(-{1,2}[^' ]+)/.exec(message)?.[1] ?? "argument"
  const help = `(see paykit ${command} --help)`
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION":
      return new UsageError({ argument: option, rule: `not an option of paykit ${command} ${help}` })
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      return message.includes("does not take an argument")
        ? new UsageError({ argument: option, rule: `takes no value ${help}` })
        : new UsageError({ argument: option, rule: `needs a value (write ${option}=VALUE when the value starts with "-") ${help}` })
    default:
      return new UsageError({ argument: option, rule: `${message} ${help}` })
  }
}

/** The single value of a string option, else its environment variable, else undefined. */
export function optionValue(parsed: Parsed, name: string, spec: OptionSpec | undefined, env: Readonly<Record<string, string | undefined>>): string | undefined {
  const given = parsed.strings.get(name)?.[0]
  if (given !== undefined) return given
  const fromEnv = spec?.env === undefined ? undefined : env[spec.env]
  return fromEnv === "" ? undefined : fromEnv
}

/** Renders a command's help: usage, description, options (with their environment variables). */
export function renderHelp(spec: {
  readonly usage: string
  readonly summary: string
  readonly description?: string
  readonly options: Readonly<Record<string, OptionSpec>>
  readonly examples?: ReadonlyArray<string>
}): string {
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const left = `--${name}${o.type === "string" ? ` ${o.value ?? "VALUE"}` : ""}`
    const right = `${o.help}${o.env === undefined ? "" : ` (env ${o.env})`}${o.repeatable === true ? " (repeatable)" : ""}`
    return [left, right] as const
  })
  const width = Math.max(...rows.map(([l]) => l.length))
  const lines = [`Usage: ${spec.usage}`, "", spec.summary]
  if (spec.description !== undefined) lines.push("", spec.description)
  lines.push("", "Options:", ...rows.map(([l, r]) => `  ${l.padEnd(width)}  ${r}`))
  lines.push("", "Exit codes: 0 ok, 1 verification failed or the remote side refused, 2 usage error.")
  if (spec.examples !== undefined && spec.examples.length > 0) lines.push("", "Examples:", ...spec.examples.map((e) => `  ${e}`))
  return lines.join("\n") + "\n"
}
