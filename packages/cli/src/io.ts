/**
 * What a command may touch: its output streams, the environment, files and the network. The
 * program passes the process's; tests pass their own and read what was written.
 *
 * @packageDocumentation
 */
import { readFileSync } from "node:fs"

/** The world a `paykit` command runs in. */
export interface CliIo {
  /** Writes to standard output. */
  readonly stdout: (text: string) => void
  /** Writes to standard error. */
  readonly stderr: (text: string) => void
  /** Environment variables (`PAYKIT_CONTROL_KEY`, `PAYKIT_BASE_URL`, ...). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Reads a file as UTF-8 text (the private key, `--key-file`). */
  readonly readFile: (path: string) => string
  /** The HTTP client of `status` and `trigger`. */
  readonly fetch: typeof globalThis.fetch
}

/** The process's own streams, environment, file system and `fetch`. */
export const processIo = (): CliIo => ({
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  readFile: (path) => readFileSync(path, "utf8"),
  fetch: globalThis.fetch
})

/** Exit codes of every command. */
export const ExitCode = {
  /** The command did what was asked; a verification passed. */
  ok: 0,
  /** A verification failed (control mismatch, forged callback) or the remote side refused or failed. */
  failed: 1,
  /** The command line or an input is wrong: an unknown option, a missing argument, a bad amount. */
  usage: 2
} as const

/** One of {@link ExitCode}'s values. */
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]
