/**
 * The simulator's pages in Debian's Chromium (playwright-core, never a downloaded browser): the
 * dashboard at /__sim/ui in every state (empty, orders with callbacks, a failing callback, settled
 * and charged back, an action's note, the live request log) and the hosted payment form and 3-D
 * Secure page (empty, brand detected, inline errors, the server's errors, the challenge, the
 * result). Each at 390 px and 1440 px: no horizontal overflow, 0 axe-core violations, a screenshot
 * in packages/testkit/test-artifacts/. Never more of a card than BIN and last four, nor a key.
 */
import { execFileSync } from "node:child_process"
import { mkdirSync } from "node:fs"
import { createRequire } from "node:module"
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type Simulator } from "../src/index"
import { signedRequest } from "./helpers"

const executablePath = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim()
  } catch {
    return ""
  }
})()
const artifacts = new URL("../test-artifacts/", import.meta.url).pathname
const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js")
const run = executablePath !== "" || process.env.CI ? describe : describe.skip

const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1440, height: 900 } } as const
type Width = keyof typeof WIDTHS

interface AxeViolation {
  id: string
  help: string
  nodes: Array<string>
}

const axe = async (page: Page): Promise<Array<AxeViolation>> => {
  await page.addScriptTag({ path: axePath })
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: Array<{ id: string; help: string; nodes: Array<{ target: Array<string> }> }> }> } }).axe.run(document, { resultTypes: ["violations"] })
    return result.violations.map((v) => ({ id: v.id, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }))
  })
}

const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)

/** Checks one state at the page's width: fits, 0 axe violations, no card number or key; saves its screenshot. */
async function checkState(page: Page, width: Width, name: string, scripted = true): Promise<void> {
  await page.screenshot({ path: `${artifacts}${name}-${width}.png`, fullPage: true })
  expect(await overflow(page), `${name} at ${width} overflows`).toBeLessThanOrEqual(0)
  const html = await page.content()
  // axe runs as a script: a page shown without scripts is checked as a copy in a scripted page.
  if (scripted) expect(await axe(page), `${name} at ${width}`).toEqual([])
  else {
    const copy = await page.context().browser()!.newPage({ viewport: WIDTHS[width] })
    await copy.setContent(html.replace(/<script>[\s\S]*?<\/script>/g, ""))
    expect(await axe(copy), `${name} at ${width}`).toEqual([])
    await copy.close()
  }
  for (const secret of [testMerchant.controlKey, "PRIVATE KEY", "4111111111111111", "4000000000001976", "4000000000003220"]) expect(html, `${name} shows ${secret}`).not.toContain(secret)
}

run("the simulator's pages in Chromium", () => {
  let browser: Browser
  let sim: Simulator
  let server: { url: string; close(): Promise<void> }
  let callbackAnswer = 200

  const sale = async (pan: string, extra: Record<string, string> = {}) => {
    const fields = requests.sale({ credit_card_number: pan, server_callback_url: "https://merchant.example/paykit/callback", ...extra })
    const reply = await signedRequest(sim, "SALE", fields, { base: server.url })
    return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
  }

  beforeAll(async () => {
    if (executablePath === "") throw new Error("chromium is not installed (apt-get install chromium)")
    mkdirSync(artifacts, { recursive: true })
    sim = createSimulator({
      dashboard: true,
      startTime: Date.UTC(2026, 10, 23, 9, 0, 0),
      callbackFetch: (async () => new Response("ok", { status: callbackAnswer })) as typeof fetch
    })
    server = await sim.listen()
    browser = await chromium.launch({ executablePath, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"] })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await sim?.close()
  })

  const open = async (width: Width, path: string, options: { javaScriptEnabled?: boolean } = {}): Promise<{ context: BrowserContext; page: Page }> => {
    const context = await browser.newContext({ viewport: WIDTHS[width], javaScriptEnabled: options.javaScriptEnabled ?? true })
    const page = await context.newPage()
    await page.goto(`${server.url}${path}`)
    return { context, page }
  }

  it("dashboard: empty, then orders with ledgers, callbacks and a failing callback, settled and charged back, at both widths", async () => {
    for (const width of ["phone", "desktop"] as const) {
      const { context, page } = await open(width, "/__sim/ui")
      expect(await page.textContent("h1")).toBe("Sandbox dashboard")
      expect(await page.textContent("#orders")).toContain("No orders yet.")
      await checkState(page, width, "dashboard-empty")
      await context.close()
    }
    const approved = await sale("4111111111111111")
    await sale("4000000000000002")
    await sale("4000000000003220")
    await sim.clock.advance(5_000)
    callbackAnswer = 500
    const failing = await sale("5555555555554444")
    await sim.clock.advance(5_000 + 10_000)
    callbackAnswer = 200
    const chargeback = await sale("4000000000001976")
    await sim.clock.advance(5_000)
    await sim.fetch(new Request(`${server.url}/__sim/orders/${chargeback.orderid}/settle`, { method: "POST" }))
    await sim.fetch(new Request(`${server.url}/__sim/orders/${chargeback.orderid}/chargeback`, { method: "POST", body: JSON.stringify({ amount: "2.00" }) }))
    for (const width of ["phone", "desktop"] as const) {
      const { context, page } = await open(width, "/__sim/ui")
      const card = page.locator(`#order-${approved.orderid}`)
      expect(await card.textContent()).toContain("411111******1111")
      expect(await card.locator("dl.ledger").textContent()).toMatch(/Captured\s*[0-9.]+/)
      expect(await page.locator(`#order-${failing.orderid} tbody tr`).filter({ hasText: "HTTP 500" }).count()).toBeGreaterThanOrEqual(2)
      expect(await page.locator(`#order-${chargeback.orderid}`).textContent()).toMatch(/Charged back\s*2\.00/)
      expect(await page.locator("#log tbody tr").count()).toBeGreaterThanOrEqual(5)
      await checkState(page, width, "dashboard-orders")
      // The first screen as it opens (the README's picture is this one at 1440 px).
      await page.screenshot({ path: `${artifacts}dashboard-orders-${width}-first-screen.png` })
      await context.close()
    }
  }, 120_000)

  it("dashboard: actions show their note; redeliver answers; the live log and the orders update without a reload", async () => {
    for (const width of ["phone", "desktop"] as const) {
      const { context, page } = await open(width, "/__sim/ui")
      await page.fill("#minutes", "90")
      await Promise.all([page.waitForURL(/note=/), page.click("form.act:has(#minutes) button")])
      expect(await page.textContent("[role=status]")).toMatch(/^Clock advanced by 90 minutes; now /)
      await checkState(page, width, "dashboard-action-note")
      const redeliver = page.locator("button:has-text('Redeliver')").first()
      await Promise.all([page.waitForURL(/note=/), redeliver.click()])
      expect(await page.textContent("[role=status]")).toMatch(/sent again \(attempt \d+\): answered HTTP 200/)
      await Promise.all([page.waitForURL(/note=/), page.click("button:has-text('Decline the next payment')")])
      expect(await page.textContent("[role=status]")).toMatch(/^The next payment will be declined/)
      // A request while the page is open: its row and its order appear (the script polls every
      // 1.5 s of real time, src/dashboard/assets.ts): the waits are hang guards of many polls.
      const fresh = await sale("4111111111111111")
      await page.waitForSelector(`#log tbody tr:has-text("${fresh.client_orderid}")`, { timeout: 60_000 })
      await page.waitForSelector(`#order-${fresh.orderid}`, { timeout: 60_000 })
      expect(await page.textContent(`#order-${fresh.orderid} h3`)).toContain("processing")
      await checkState(page, width, "dashboard-live")
      await context.close()
    }
  }, 300_000)

  it("hosted form: brand detected and grouped, inline errors, the server's errors without a script, at both widths", async () => {
    for (const width of ["phone", "desktop"] as const) {
      const form = requests.saleForm({ amount: "24.90", currency: "EUR" })
      const reply = await signedRequest(sim, "SALEFORM", form, { base: server.url })
      const url = String(reply.body["redirect-url"])
      const { context, page } = await open(width, new URL(url).pathname)
      expect(await page.textContent(".test-banner")).toContain("TEST ENVIRONMENT")
      expect(await page.textContent("#submit")).toBe("Pay 24.90 EUR")
      await checkState(page, width, "hosted-form-empty")
      await page.fill("#credit_card_number", "5555555555554444")
      expect(await page.inputValue("#credit_card_number")).toBe("5555 5555 5555 4444")
      expect(await page.textContent("#credit_card_number-brand")).toBe("Mastercard")
      await page.fill("#credit_card_number", "378282246310005")
      expect(await page.inputValue("#credit_card_number")).toBe("3782 822463 10005")
      expect(await page.textContent("#credit_card_number-brand")).toBe("Amex")
      await page.fill("#credit_card_number", "4111111111111112")
      await page.fill("#card_printed_name", "TEST CUSTOMER")
      await page.fill("#expire_month", "13")
      await page.click("#submit")
      expect(await page.textContent("#credit_card_number-error")).toBe("Enter a valid card number")
      expect(await page.textContent("#expire_month-error")).toBe("Enter the month as two digits (01-12)")
      expect(await page.getAttribute("#credit_card_number", "aria-invalid")).toBe("true")
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("credit_card_number")
      expect(new URL(page.url()).pathname).toBe(new URL(url).pathname)
      await checkState(page, width, "hosted-form-inline-errors")
      await context.close()
      // Without a script the server checks and answers the form again, errors inline and summarised.
      const plain = await open(width, new URL(url).pathname, { javaScriptEnabled: false })
      await plain.page.fill("#credit_card_number", "4111111111111112")
      await plain.page.fill("#cvv2", "1")
      await plain.page.click("#submit")
      await plain.page.waitForSelector("#error-summary")
      expect(await plain.page.locator("#error-summary li").count()).toBe(5)
      expect(await plain.page.inputValue("#credit_card_number")).toBe("")
      await checkState(plain.page, width, "hosted-form-server-errors", false)
      await plain.context.close()
    }
  }, 120_000)

  it("hosted form → 3-D Secure page → result, at both widths", async () => {
    for (const width of ["phone", "desktop"] as const) {
      const form = requests.saleForm({ amount: "24.90", currency: "EUR" })
      const reply = await signedRequest(sim, "SALEFORM", form, { base: server.url })
      const { context, page } = await open(width, new URL(String(reply.body["redirect-url"])).pathname)
      await page.fill("#credit_card_number", "4000000000003220")
      expect(await page.textContent("#credit_card_number-brand")).toBe("Visa")
      await page.fill("#card_printed_name", "TEST CUSTOMER")
      await page.fill("#expire_month", "12")
      await page.fill("#expire_year", "2030")
      await page.fill("#cvv2", "123")
      await checkState(page, width, "hosted-form-filled")
      await Promise.all([page.waitForSelector("#pass"), page.click("#submit")])
      expect(await page.textContent("#acs-card")).toBe("400000******3220")
      await checkState(page, width, "threeds-challenge")
      // The final redirect POSTs the signed result to the merchant's redirect_url: stand in for the merchant.
      let returned = ""
      await page.route("https://merchant.example/**", async (route) => {
        returned = route.request().postData() ?? ""
        await route.fulfill({ status: 200, contentType: "text/html", body: "<!doctype html><html lang=en><title>Merchant</title><main><h1>Back at the merchant</h1></main></html>" })
      })
      await Promise.all([page.waitForURL("https://merchant.example/**"), page.click("#pass")])
      expect(new URLSearchParams(returned).get("status")).toBe("approved")
      await context.close()
      // The result page as a customer without a script sees it (the redirect waits for a click).
      const still = await open(width, `/__sim/form/${String(reply.body["paynet-order-id"])}`, { javaScriptEnabled: false })
      expect(await still.page.textContent("main"), still.page.url()).toContain("approved")
      await checkState(still.page, width, "payment-result", false)
      await still.context.close()
      continue
      await context.close()
    }
  }, 120_000)
})
