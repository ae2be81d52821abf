/**
 * The PGlite store across a process killed with SIGKILL: what it recorded before is there for the
 * next process to recover (test/store/crash-child.ts records, then prints "ready").
 */
import { spawn } from "node:child_process"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { openPgliteStore } from "../../src/store/pglite"
import { ManualClock } from "./support"

describe("pglite adapter: durable in a directory", () => {
  it("keeps what a process recorded before it was killed with SIGKILL, for the next process to recover", async () => {
    const crashDir = mkdtempSync(join(tmpdir(), "paykit-pglite-crash-"))
    try {
      const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(new URL("./crash-child.ts", import.meta.url)), crashDir], {
        cwd: fileURLToPath(new URL("../..", import.meta.url)),
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
      // Readiness by the child's own line (it prints "ready" once its writes returned).
      let stdout = ""
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (d: Buffer) => (stdout += d.toString()).includes("ready") && resolve())
        child.on("exit", (code) => reject(new Error(`child exited ${code} before recording: ${stderr.slice(-500)}`)))
      })
      child.kill("SIGKILL")
      await new Promise((r) => child.once("exit", r))
      const next = await openPgliteStore({ dataDir: crashDir, instanceId: "next" })
      try {
        const clock = new ManualClock(Date.now() + 5_000)
        const claimed = await Effect.runPromise(Effect.withClock(next.unfinished({ leaseMs: 1000 }), clock))
        expect(claimed.map((i) => [i.idempotencyKey, i.amount, i.owner, i.attempts])).toEqual([["crash-1", "12.34", "next", 2]])
        const callback = await Effect.runPromise(Effect.withClock(next.claimCallback("status=approved&orderid=1&client_orderid=o-crash", { leaseMs: 1000 }), clock))
        expect(callback).toMatchObject({ _tag: "Claimed", attempt: 2 })
      } finally {
        await next.close()
      }
    } finally {
      rmSync(crashDir, { recursive: true, force: true })
    }
  }, 300_000)

})
