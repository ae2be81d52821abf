import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { signControl } from "@paykit/signing"
import { requests, testMerchant } from "../src/index"
import { decodeReply } from "./helpers"

const bin = fileURLToPath(new URL("../bin/paykit-sim.js", import.meta.url))
const children: ChildProcess[] = []
afterAll(() => {
  // Only the processes this file started, by their handles.
  for (const c of children) if (c.exitCode === null) c.kill("SIGTERM")
})

function configFile(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "paykit-sim-retention-")), "sim.json")
  writeFileSync(file, JSON.stringify(config))
  return file
}

function run(file: string): { child: ChildProcess; listening: Promise<string>; stderr: () => string } {
  const child = spawn(process.execPath, [bin, "--port", "0", "--host", "127.0.0.1", "--config", file], { stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  let err = ""
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString("utf8")))
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no listening line")), 15_000)
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const m = /^PayKit simulator listening on (http:\/\/127\.0\.0\.1:[0-9]+)$/.exec(line)
      if (m !== null) {
        clearTimeout(timer)
        resolve(m[1]!)
      }
    })
    child.once("exit", () => {
      clearTimeout(timer)
      reject(new Error("exited"))
    })
  })
  return { child, listening, stderr: () => err }
}

const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }
const key = testMerchant.controlKey
const endpointId = testMerchant.endpointId

describe("paykit-sim --config retention", () => {
  it("{ retention: { maxOrders } } bounds the orders the process keeps", async () => {
    const { child, listening } = run(configFile({ processingDelayMs: 0, retention: { maxOrders: 1, maxAgeMs: 3_600_000 } }))
    const url = await listening
    const sale = async () => {
      const fields = requests.sale()
      const res = await fetch(`${url}/api/v2/sale/${endpointId}`, { method: "POST", headers, body: new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key, endpointId }) }).toString() })
      const body = decodeReply("SALE", res.status, await res.json())
      return { orderid: String(body["paynet-order-id"]), client_orderid: fields.client_orderid }
    }
    const status = async (ids: { orderid: string; client_orderid: string }) => {
      const fields = { login: testMerchant.login, ...ids }
      const res = await fetch(`${url}/api/v2/status/${endpointId}`, { method: "POST", headers, body: new URLSearchParams({ ...fields, control: signControl("STATUS", fields, { key, endpointId }) }).toString() })
      return decodeReply("STATUS", res.status, await res.json())
    }
    const first = await sale()
    for (let i = 0; i < 4; i++) await sale()
    const last = await sale()
    expect((await status(first))["error-code"]).toBe("order-not-found")
    expect((await status(last))["status"]).toBe("approved")
    child.kill("SIGTERM")
  })

  it("a bad retention value stops the process with the field and the rule", async () => {
    const { child, listening, stderr } = run(configFile({ retention: { maxOrders: -5 } }))
    listening.catch(() => undefined)
    const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)))
    expect(code).toBe(1)
    expect(stderr()).toContain("retention.maxOrders: must be an integer of at least 1, or Infinity (got -5)")
  })
})
