/**
 * Card fingerprints kept by orders and recurring payments are copies (src/rules/cards.ts `cardData`,
 * src/http/own.ts): a fingerprint is cut from the SHA-256 hex digest, and V8 makes such a cut a
 * slice that keeps the whole 64-digit text alive. The heap snapshot is taken in a small child
 * process that loads only the simulator (test/heap/kept-fingerprints.ts) and scans the snapshot's
 * strings as they stream, so the test's cost does not grow with the vitest worker's heap.
 */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const child = fileURLToPath(new URL("./heap/kept-fingerprints.ts", import.meta.url))

interface Scan {
  readonly statuses: number[]
  readonly kept: string[]
  readonly found: string[]
  readonly canary: boolean
}

/** Runs the child to its end and reads its one JSON line. */
function scanChild(): Promise<Scan> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", child], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    proc.stdout.on("data", (chunk) => (stdout += String(chunk)))
    proc.stderr.on("data", (chunk) => (stderr += String(chunk)))
    proc.on("error", reject)
    proc.on("close", (code) => {
      if (code !== 0) reject(new Error(`kept-fingerprints exited ${code}: ${stderr}`))
      else resolve(JSON.parse(stdout.trim().split("\n").at(-1)!) as Scan)
    })
  })
}

describe("card fingerprints kept by orders", () => {
  // The child needs a few seconds on a loaded machine; the timeout only guards against a hang.
  it("are copies: no order or recurring payment keeps the 64-digit SHA-256 text a fingerprint is cut from", async () => {
    const scan = await scanChild()
    expect(scan.statuses).toEqual([200, 200, 200, 200, 200])
    // The scan sees a 64-digit hex string the child holds, so an empty `found` is not a blind scan.
    expect(scan.canary).toBe(true)
    expect(scan.kept).toHaveLength(6)
    for (const fingerprint of scan.kept) expect(fingerprint).toMatch(/^[0-9a-f]{32}$/)
    expect(scan.found).toEqual([])
  }, 180_000)
})
