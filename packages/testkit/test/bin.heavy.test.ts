/**
 * The paykit-sim bin as a process: what it prints, a hand-signed sale, its dashboard, --config.
 * Readiness and shutdown by its output lines (test/sim-process.ts).
 */
import { createHash } from "node:crypto"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { decodeReply } from "./helpers"
import { TEST_TIMEOUT_MS, killChildren, startSim } from "./sim-process"

afterAll(killChildren)

describe("paykit-sim bin", { timeout: TEST_TIMEOUT_MS }, () => {
  it("listens, prints the merchant, accepts a hand-signed sale and refuses a changed control", async () => {
    const { url, lines, stop } = await startSim([])
    expect(lines[0]).toBe(`PayKit simulator listening on ${url}`)
    const out = lines.join("\n")
    expect(out).toContain("paykit-test")
    expect(out).toContain("F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F")
    expect(out).toContain("1001")
    expect(out).toContain("2001")

    // Like the README's curl + sha1sum example: control = sha1(endpointId + client_orderid + amount in cents + email + key).
    const clientOrderId = `bin-${Date.now()}`
    const control = createHash("sha1").update(`1001${clientOrderId}1042buyer@example.comF1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F`).digest("hex")
    const fields = {
      client_orderid: clientOrderId, order_desc: "Hand signed", amount: "10.42", currency: "USD", address1: "1 Main St", city: "Springfield",
      zip_code: "12345", country: "US", phone: "+15555550100", email: "buyer@example.com", ipaddress: "203.0.113.7",
      card_printed_name: "JOHN DOE", credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2099", cvv2: "123",
      redirect_url: "https://merchant.example/return", control
    }
    const send = (body: Record<string, string>) => fetch(`${url}/api/v2/sale/1001`, {
      method: "POST",
      headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body).toString()
    })
    const ok = await send(fields)
    expect(ok.status).toBe(200)
    expect(decodeReply("SALE", 200, await ok.json())).toMatchObject({ status: "processing", "merchant-order-id": clientOrderId })

    const changed = (control[0] === "a" ? "b" : "a") + control.slice(1)
    const bad = await send({ ...fields, client_orderid: `${clientOrderId}-2`, control: changed })
    expect(bad.status).toBe(400)
    const refused = decodeReply("SALE", 400, await bad.json())
    expect(refused["error-code"]).toBe("control-mismatch")
    // paykit-sim runs in test mode: the refusal explains the digest without the key.
    expect(refused["error-message"]).toContain("amount entered as 1042 (10.42 USD in minor units")
    expect(refused["error-message"]).not.toContain("F1C3A5E7")
    // ... and serves the dashboard (createSimulator alone does not).
    const ui = await fetch(`${url}/__sim/ui`)
    expect(ui.status).toBe(200)
    const html = await ui.text()
    expect(html).toContain("Sandbox dashboard")
    expect(html).toContain(clientOrderId)
    expect(html).not.toContain("4111111111111111")
    expect(html).not.toContain("F1C3A5E7")
    expect(await stop()).toBe(0)
  })

  it("--config serves the configured merchants", async () => {
    const dir = mkdtempSync(join(tmpdir(), "paykit-sim-"))
    const file = join(dir, "sim.json")
    writeFileSync(file, JSON.stringify({ merchants: [{ login: "shop", controlKey: "SHOP-KEY", endpointIds: [42] }], processingDelayMs: 0 }))
    const { url, lines, stop } = await startSim(["--config", file])
    expect(lines.join("\n")).toContain("shop")
    const clientOrderId = `cfg-${Date.now()}`
    const fields = { login: "shop", client_orderid: clientOrderId }
    const control = createHash("sha1").update(`shop${clientOrderId}SHOP-KEY`).digest("hex")
    const res = await fetch(`${url}/api/v2/status/42`, {
      method: "POST",
      headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, control }).toString()
    })
    expect(decodeReply("STATUS", res.status, await res.json())["error-code"]).toBe("order-not-found")
    expect(await stop()).toBe(0)
  })
})
