/**
 * paykit-sim --config's retention as a process: maxOrders bounds what it keeps; a bad value stops
 * it with the field and the rule. Readiness and shutdown by its output lines (test/sim-process.ts).
 */
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { signControl } from "@paykit/signing"
import { requests, testMerchant } from "../src/index"
import { decodeReply } from "./helpers"
import { BIN, TEST_TIMEOUT_MS, killChildren, spawnLines, startSim } from "./sim-process"

afterAll(killChildren)

function configFile(config: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), "paykit-sim-retention-")), "sim.json")
  writeFileSync(file, JSON.stringify(config))
  return file
}

const headers = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" }
const key = testMerchant.controlKey
const endpointId = testMerchant.endpointId

describe("paykit-sim --config retention", { timeout: TEST_TIMEOUT_MS }, () => {
  it("{ retention: { maxOrders } } bounds the orders the process keeps", async () => {
    const { url, stop } = await startSim(["--config", configFile({ processingDelayMs: 0, retention: { maxOrders: 1, maxAgeMs: 3_600_000 } })])
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
    expect(await stop()).toBe(0)
  })

  it("a bad retention value stops the process with the field and the rule", async () => {
    const { exited, stderr } = spawnLines(BIN, ["--port", "0", "--host", "127.0.0.1", "--config", configFile({ retention: { maxOrders: -5 } })])
    expect(await exited).toBe(1)
    expect(stderr()).toContain("retention.maxOrders: must be an integer of at least 1, or Infinity (got -5)")
  })
})
