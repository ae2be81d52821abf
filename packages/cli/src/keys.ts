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
export function controlKey(parsed: Parsed, io: CliIo): Redacted.Redacted<string> | undefined {
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
