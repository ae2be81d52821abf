/**
 * Child processes of the fleet run: forked Node processes running the children's bundles (bundle.ts:
 * the workspace's TypeScript sources, `@paykit/source` condition), each with an IPC channel. Every
 * child exits when the channel closes, so the children never outlive the run, even when the run
 * itself is killed.
 */
import { fork, type ChildProcess } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const FLEET_DIR = join(dirname(fileURLToPath(import.meta.url)), "..")

export interface Message {
  readonly t: string
  readonly [field: string]: unknown
}

/** Forks the bundled module `path` with the given environment (secrets go here, never in argv). */
export function spawnChild(path: string, env: Record<string, string>): ChildProcess {
  return fork(path, [], {
    cwd: FLEET_DIR,
    execArgv: process.env["FLEET_CPU_PROF"] === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${process.env["FLEET_CPU_PROF"]}`],
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
}

/** Waits for the child's first message of type `t` (or its death, or the timeout). */
export function nextMessage(child: ChildProcess, t: string, timeoutMs: number): Promise<Message> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error, message?: Message) => {
      clearTimeout(timer)
      child.off("message", onMessage)
      child.off("exit", onExit)
      if (error !== undefined) reject(error)
      else resolve(message!)
    }
    const onMessage = (m: unknown) => {
      if (typeof m === "object" && m !== null && (m as Message).t === t) done(undefined, m as Message)
    }
    const onExit = (code: number | null, signal: string | null) => done(new Error(`child exited (${code ?? signal}) before "${t}"`))
    const timer = setTimeout(() => done(new Error(`no "${t}" from the child within ${timeoutMs} ms`)), timeoutMs)
    child.on("message", onMessage)
    child.once("exit", onExit)
  })
}

/** SIGKILLs a child and waits for it to be gone. */
export async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  child.kill("SIGKILL")
  await gone
}
