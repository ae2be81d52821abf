/**
 * Secrets from the command line, a file or the environment, wrapped in `Redacted` at once so no
 * output, error or `--json` document can print them.
 *
 * @packageDocumentation
 */
import { Redacted } from "./effect-free"
import { optionValue, type OptionSpec, type Parsed } from "./args"
import { UsageError } from "./errors"
import type { CliIo } from "./io"

/** Options that give the merchant control key. */
export const keyOptions = {
  key: { type: "string", value: "K", env: "PAYKIT_CONTROL_KEY", help: "the merchant control key (prefer the environment variable or --key-file: arguments show in process lists)" },
  "key-file": { type: "string", value: "FILE", help: "read the control key from FILE (surrounding whitespace ignored)" }
} as const satisfies Record<string, OptionSpec>

/** The control key, or undefined when none was given. */
function controlKey(parsed: Parsed, io: CliIo): Redacted.Redacted<string> | undefined {
  const file = parsed.strings.get("key-file")?.[0]
  const given = parsed.strings.get("key")?.[0]
  if (file !== undefined && given !== undefined) throw new UsageError({ argument: "--key-file", rule: "give either --key or --key-file, not both" })
  if (file !== undefined) {
    const text = readOrUsage(io, file, "--key-file").trim()
    if (text === "") throw new UsageError({ argument: "--key-file", rule: `${file} is empty` })
    return Redacted.make(text)
  }
  const key = optionValue(parsed, "key", keyOptions.key, io.env)
  return key === undefined ? undefined : Redacted.make(key)
}

/**
 * Every control key given, in order (a key rotation: current first, then the previous): each
 * `--key`, or each `--key-file`, or `PAYKIT_CONTROL_KEY`. Empty when none was given.
 */
export function controlKeys(parsed: Parsed, io: CliIo): ReadonlyArray<Redacted.Redacted<string>> {
  const files = parsed.strings.get("key-file") ?? []
  const given = parsed.strings.get("key") ?? []
  if (files.length > 0 && given.length > 0) throw new UsageError({ argument: "--key-file", rule: "give either --key or --key-file, not both" })
  if (files.length > 0) {
    return files.map((file) => {
      const text = readOrUsage(io, file, "--key-file").trim()
      if (text === "") throw new UsageError({ argument: "--key-file", rule: `${file} is empty` })
      return Redacted.make(text)
    })
  }
  given.forEach((key, index) => {
    if (key === "") throw new UsageError({ argument: "--key", rule: `the ${ordinal(index + 1)} --key is empty` })
  })
  if (given.length > 0) return given.map((key) => Redacted.make(key))
  const key = optionValue(parsed, "key", keyOptions.key, io.env)
  return key === undefined ? [] : [Redacted.make(key)]
}

/** `1st`, `2nd`, `3rd`, `4th`, ... */
export function ordinal(n: number): string {
  const teen = n % 100 >= 11 && n % 100 <= 13
  const suffix = teen ? "th" : n % 10 === 1 ? "st" : n % 10 === 2 ? "nd" : n % 10 === 3 ? "rd" : "th"
  return `${n}${suffix}`
}

/** The control key; a UsageError naming `--key` when absent. */
export function requireControlKey(parsed: Parsed, io: CliIo, why: string): Redacted.Redacted<string> {
  const key = controlKey(parsed, io)
  if (key === undefined) throw new UsageError({ argument: "--key", rule: `${why}; give --key K, --key-file FILE or set PAYKIT_CONTROL_KEY` })
  return key
}

/** Reads a file or fails with a UsageError naming the option (never the file's content). */
export function readOrUsage(io: CliIo, path: string, option: string): string {
  try {
    return io.readFile(path)
  } catch (error) {
    const code = (error as { code?: string }).code
    throw new UsageError({ argument: option, rule: `cannot read ${path}${code === undefined ? "" : ` (${code})`}` })
  }
}
