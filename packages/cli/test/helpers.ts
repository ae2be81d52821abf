import { readFileSync } from "node:fs"
import { run, type CliIo } from "../src/index"

/** What one command line printed and returned. */
export interface Ran {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `paykit` in process with captured streams, an empty environment unless given, and real files. */
export async function paykit(argv: ReadonlyArray<string>, options: { env?: Record<string, string>; fetch?: typeof fetch } = {}): Promise<Ran> {
  let stdout = ""
  let stderr = ""
  const io: CliIo = {
    stdout: (t) => void (stdout += t),
    stderr: (t) => void (stderr += t),
    env: options.env ?? {},
    readFile: (path) => readFileSync(path, "utf8"),
    fetch: options.fetch ?? (async () => {
      throw new Error("no network in this test")
    })
  }
  const code = await run(argv, io)
  return { code, stdout, stderr }
}

// The signing package keeps the workspace's one copy of the shared vectors (refreshed from
// ../shared/vectors); the CLI is checked against the same files, not a copy of its own.
const vectorsUrl = new URL("../../signing/test/vectors/", import.meta.url)
export const vectorsDir = vectorsUrl.pathname

export function readJson<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(name, vectorsUrl), "utf8")) as T
}
