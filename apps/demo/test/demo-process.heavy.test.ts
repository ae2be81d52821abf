/**
 * `pnpm demo` as a process: a bad or taken port is one line on stderr (no stack) and an exit code;
 * --help prints the usage. Each test starts `node --import tsx`: its time is the machine's, so the
 * kill after HANG_GUARD_MS and the test timeout above it only guard against a hang.
 */
import { spawn } from "node:child_process"
import { createServer, type Server } from "node:net"
import { describe, expect, it } from "vitest"
import { demoHelp } from "../src/args"

/** Far above a `node --import tsx` start on a loaded 2-core machine. */
const HANG_GUARD_MS = 120_000

const main = new URL("../src/main.ts", import.meta.url).pathname

/** Runs the demo's main as `pnpm demo` does, and collects its exit code and output. */
const demo = (...args: Array<string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", main, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), HANG_GUARD_MS)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const occupy = () =>
  new Promise<{ server: Server; port: number }>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }))
  })

describe("the demo process", { timeout: HANG_GUARD_MS + 60_000 }, () => {
  it("--port abc: one line, exit 2", async () => {
    const r = await demo("--serve", "--port", "abc")
    expect(r).toEqual({ code: 2, stdout: "", stderr: "demo: --port abc: must be an integer from 0 to 65535 (0 picks a free port)\n" })
  })

  it("a taken port: one line, exit 1", async () => {
    const { server, port } = await occupy()
    try {
      const r = await demo("--serve", "--port", String(port))
      expect(r.stderr).toBe(`demo: port ${port} on 127.0.0.1 is already in use: stop what uses it, or pass --port N (--port 0 picks a free port)\n`)
      expect(r.code).toBe(1)
    } finally {
      server.close()
    }
  })

  it("--help prints the usage and exits 0", async () => {
    const r = await demo("--help")
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(demoHelp)
  })
})
