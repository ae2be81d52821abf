/**
 * paykit-sim as a child process, for the heavy tests (`*.heavy.test.ts`, issue #32): readiness and
 * every later check go by the lines it prints, never by a fixed sleep. The start-up output ends
 * with the merchants (`  RSA private key: …` for the test merchant, `Merchants: …` with --config;
 * src/cli.ts), so once that line is in, every start-up line is (the listening line, the admin
 * token, "Restored …"). `stop` sends SIGTERM and waits until the process exited and its output is
 * all read, so a check of what it printed (or did not print) sees everything it wrote.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

/** A `node` start (tsx inside the workspace) takes seconds on a loaded machine: this only guards against a hang. */
export const HANG_GUARD_MS = 90_000
/** A per-test timeout above the hang guards of a start and a stop. */
export const TEST_TIMEOUT_MS = 3 * HANG_GUARD_MS

const bin = fileURLToPath(new URL("../bin/paykit-sim.js", import.meta.url))
const cli = fileURLToPath(new URL("../src/cli.ts", import.meta.url))

/** The command that starts the installed bin, or src/cli.ts through tsx (the current sources). */
export const BIN = [process.execPath, bin] as const
export const SOURCES = [process.execPath, "--conditions=@paykit/source", "--import", "tsx", cli] as const

/** A running paykit-sim. */
export interface SimProcess {
  readonly child: ChildProcess
  readonly url: string
  /** Every stdout line so far (and later ones, as they come). */
  readonly lines: string[]
  readonly stderr: () => string
  /** Resolves with the first line (so far or later) that `test` accepts. */
  readonly waitForLine: (test: RegExp) => Promise<string>
  /** SIGTERM, then the exit code once the process exited and its output is all read. */
  readonly stop: () => Promise<number | null>
}

/** The processes started here, killed by their handles in an afterAll. */
export const children: ChildProcess[] = []

/** Kills what is still running of the processes this file's tests started. */
export function killChildren(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL")
}

const LAST_START_LINE = /^ {2}RSA private key: |^Merchants: /
const LISTENING = /^PayKit simulator listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/

/** Spawns `command args`; `exited` resolves with the exit code once its output is all read. */
export function spawnLines(command: ReadonlyArray<string>, args: ReadonlyArray<string>): { child: ChildProcess; lines: string[]; stderr: () => string; exited: Promise<number | null>; waitForLine: (test: RegExp) => Promise<string> } {
  const child = spawn(command[0]!, [...command.slice(1), ...args], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  const lines: string[] = []
  const waiters: Array<{ test: RegExp; resolve: (line: string) => void }> = []
  let err = ""
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line)
    for (const w of [...waiters]) {
      if (w.test.test(line)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(line)
      }
    }
  })
  // "close": the process exited and its stdio streams ended (every line above was seen).
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)))
  const waitForLine = (test: RegExp) => {
    const seen = lines.find((l) => test.test(l))
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line ${test} in ${HANG_GUARD_MS} ms; got ${JSON.stringify(lines)}; stderr ${err}`)), HANG_GUARD_MS)
      waiters.push({ test, resolve: (line) => (clearTimeout(timer), resolve(line)) })
      void exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`exited with ${code} before a line ${test}; got ${JSON.stringify(lines)}; stderr ${err}`))
      })
    })
  }
  return { child, lines, stderr: () => err, exited, waitForLine }
}

/** Starts paykit-sim on a free port of 127.0.0.1 and resolves once every start-up line is out. */
export async function startSim(args: ReadonlyArray<string>, command: ReadonlyArray<string> = BIN): Promise<SimProcess> {
  const p = spawnLines(command, ["--port", "0", "--host", "127.0.0.1", ...args])
  await p.waitForLine(LAST_START_LINE)
  const url = LISTENING.exec(p.lines.find((l) => LISTENING.test(l)) ?? "")?.[1]
  if (url === undefined) throw new Error(`no listening line; got ${JSON.stringify(p.lines)}`)
  return {
    child: p.child,
    url,
    lines: p.lines,
    stderr: p.stderr,
    waitForLine: p.waitForLine,
    stop: () => {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGTERM")
      return p.exited
    }
  }
}
