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

export const vectorsDir = new URL("./vectors/", import.meta.url).pathname

export function readJson<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./vectors/${name}`, import.meta.url), "utf8")) as T
}
