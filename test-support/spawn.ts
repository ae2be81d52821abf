/**
 * Spawned processes for the heavy tests (`*.heavy.test.ts`) of any package: run to their end
 * without blocking this process's event loop (a simulator a child talks to may live here), with a
 * kill after `hangGuardMs` only as a guard against a hang (docs/testing.md: wall-clock limits are
 * hang guards, never the thing tested).
 */
import { spawn } from "node:child_process"

/** How a spawned process ended and what it printed. */
export interface Exited {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Well over what a `node --import tsx` start needs on a loaded 2-core machine. */
export const HANG_GUARD_MS = 120_000

/** Runs `command args` to its exit; SIGKILL only after `hangGuardMs`. */
export function runToExit(command: string, args: ReadonlyArray<string>, options: { env?: NodeJS.ProcessEnv; cwd?: string; hangGuardMs?: number } = {}): Promise<Exited> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, cwd: options.cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.hangGuardMs ?? HANG_GUARD_MS)
    child.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}
