/**
 * `paykit-sim --proxy URL --record FILE` in front of a second `paykit-sim`, then
 * `paykit-sim --replay FILE`: processes on loopback, each stopped by its own handle.
 */
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { requests, testMerchant } from "../src/index"
import { buildRequest } from "./helpers"

const bin = fileURLToPath(new URL("../bin/paykit-sim.js", import.meta.url))
const children: ChildProcess[] = []
const dir = mkdtempSync(join(tmpdir(), "paykit-proxy-bin-"))

afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM")
  rmSync(dir, { recursive: true, force: true })
})

/** Starts `paykit-sim` with these flags; resolves with its URL (from the listening line) and every line it prints. */
function start(flags: string[], listening: RegExp): Promise<{ url: string; lines: string[] }> {
  const child = spawn(process.execPath, [bin, "--port", "0", "--host", "127.0.0.1", ...flags], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  const lines: string[] = []
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; got ${JSON.stringify(lines)}`)), 15_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line)
      const m = listening.exec(line)
      if (m !== null) {
        clearTimeout(timer)
        resolve({ url: m[1]!, lines })
      }
    })
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${JSON.stringify(lines)}`)))
  })
}

/** Waits until `lines` holds a line matching `pattern` (the log line follows the reply). */
async function lineMatching(lines: string[], pattern: RegExp): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const found = lines.find((l) => pattern.test(l))
    if (found !== undefined) return found
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`no line matching ${pattern}: ${JSON.stringify(lines)}`)
}

describe("paykit-sim --proxy / --replay", () => {
  it("forwards to a second paykit-sim, logs each exchange with its mismatches, records, and replays", async () => {
    const upstream = await start([], /^PayKit simulator listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/)
    const file = join(dir, "session.jsonl")
    const proxy = await start(["--proxy", upstream.url, "--record", file], /^PayKit checking proxy listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/)
    const good = requests.sale({ credit_card_number: "5555555555554444" })
    const bad = requests.sale({ email: "not-an-email" })
    const send = async (base: string, fields: Record<string, string>) => {
      const response = await fetch(buildRequest(undefined as never, "SALE", fields, { base }))
      return { status: response.status, text: await response.text() }
    }
    const live = [await send(proxy.url, good), await send(proxy.url, bad)]
    expect(live.map((r) => r.status)).toEqual([200, 400])
    expect(await lineMatching(proxy.lines, new RegExp(`SALE client_orderid=${good.client_orderid} 200 .* forwarded spec ok$`))).toBeDefined()
    expect(await lineMatching(proxy.lines, new RegExp(`SALE client_orderid=${bad.client_orderid} 400 .* spec MISMATCH`))).toBeDefined()
    expect(await lineMatching(proxy.lines, /^ {2}✗ request email: rule/)).toBeDefined()
    const printed = proxy.lines.join("\n")
    expect(printed).not.toContain("5555555555554444")
    expect(printed).not.toContain(testMerchant.controlKey)

    const recording = readFileSync(file, "utf8")
    expect(recording).not.toContain("5555555555554444")
    expect(recording).not.toContain(testMerchant.controlKey)

    const replay = await start(["--replay", file], /^PayKit checking proxy listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/)
    const replayed = [await send(replay.url, good), await send(replay.url, bad)]
    expect(replayed).toEqual(live)
  })

  it("refuses --record without --proxy, naming the rule", async () => {
    await expect(start(["--record", join(dir, "x.jsonl")], /^PayKit/)).rejects.toThrow(/exited with 1/)
  })
})
