import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { chromium, type Browser, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startShop, type Shop } from "../src/shop/server"

// Debian's chromium, never a downloaded browser. In CI it must be there (.ci/run installs it).
const executablePath = (() => {
  try {
    return execFileSync("sh", ["-c", "command -v chromium || command -v chromium-browser"], { encoding: "utf8" }).trim()
  } catch {
    return ""
  }
})()
const artifacts = new URL("../test-artifacts/", import.meta.url).pathname
const run = executablePath !== "" || process.env.CI ? describe : describe.skip

run("the demo shop in Chromium", () => {
  let shop: Shop
  let browser: Browser

  beforeAll(async () => {
    if (executablePath === "") throw new Error("chromium is not installed (apt-get install chromium)")
    mkdirSync(artifacts, { recursive: true })
    shop = await startShop({ port: 0 })
    browser = await chromium.launch({
      executablePath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
    })
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await shop?.close()
  })

  const buy = async (page: Page, pan: string, shot: string) => {
    await page.goto(shop.url)
    await page.click("#buy")
    await page.waitForSelector("#payment-form")
    await page.fill("#credit_card_number", pan)
    await page.fill("#card_printed_name", "DEMO CUSTOMER")
    await page.fill("#expire_month", "12")
    await page.fill("#expire_year", "2030")
    await page.fill("#cvv2", "123")
    await page.screenshot({ path: `${artifacts}${shot}-hosted-form.png`, fullPage: true })
    await page.click("#submit")
  }

  const finalStatus = async (page: Page, shot: string) => {
    await page.waitForSelector("#final-status", { timeout: 30_000 })
    await page.screenshot({ path: `${artifacts}${shot}-result.png`, fullPage: true })
    return (await page.textContent("#final-status"))?.trim()
  }

  it("buys with 4111111111111111: approved", async () => {
    const page = await browser.newPage()
    await buy(page, "4111111111111111", "approved")
    expect(await finalStatus(page, "approved")).toBe("approved")
    await page.close()
  }, 60_000)

  it("buys with 4000000000003220 and passes the 3-D Secure challenge: approved", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000003220", "3ds-pass")
    await page.waitForSelector("#pass")
    await page.screenshot({ path: `${artifacts}3ds-pass-challenge.png`, fullPage: true })
    await page.click("#pass")
    expect(await finalStatus(page, "3ds-pass")).toBe("approved")
    await page.close()
  }, 60_000)

  it("buys with 4000000000003220 and fails the challenge: declined", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000003220", "3ds-fail")
    await page.waitForSelector("#fail")
    await page.click("#fail")
    expect(await finalStatus(page, "3ds-fail")).toBe("declined")
    await page.close()
  }, 60_000)

  it("lists the verified callbacks of those orders", async () => {
    const page = await browser.newPage()
    const deadline = Date.now() + 15_000
    while (shop.callbacks.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    await page.goto(`${shop.url}/callbacks`)
    await page.screenshot({ path: `${artifacts}callbacks.png`, fullPage: true })
    expect(shop.callbacks.map((c) => c.cb.status).sort()).toEqual(["approved", "approved", "declined"])
    expect(await page.locator("#log tr").count()).toBe(3)
    await page.close()
  }, 30_000)

  it("keeps the screenshots as test artifacts", () => {
    expect(existsSync(`${artifacts}3ds-pass-result.png`)).toBe(true)
  })
})
