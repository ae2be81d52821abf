/**
 * The demo shop in Debian's Chromium (playwright-core, never a downloaded browser): every outcome
 * of the result page (approved, declined with the gateway's reason, pending), the retry links,
 * the layout at 390 px and 1440 px (no horizontal overflow, the product grid stacks), and axe-core
 * on every shop page (0 violations). Screenshots land in apps/demo/test-artifacts/.
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdirSync } from "node:fs"
import { createRequire } from "node:module"
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
const axePath = createRequire(import.meta.url).resolve("axe-core/axe.min.js")
const run = executablePath !== "" || process.env.CI ? describe : describe.skip

const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1440, height: 900 }

interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: Array<string>
}

/** Runs axe-core inside the page; the violations, each with the selectors it names. */
const axe = async (page: Page): Promise<Array<AxeViolation>> => {
  await page.addScriptTag({ path: axePath })
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run: (ctx: Document, o: object) => Promise<{ violations: Array<{ id: string; impact: string | null; help: string; nodes: Array<{ target: Array<string> }> }> }> } }).axe.run(document, { resultTypes: ["violations"] })
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ")) }))
  })
}

/** How far the page is wider than the viewport (0 when it fits). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)

run("the demo shop in Chromium", () => {
  let shop: Shop
  let browser: Browser
  const resultUrls: Record<string, string> = {}

  beforeAll(async () => {
    if (executablePath === "") throw new Error("chromium is not installed (apt-get install chromium)")
    mkdirSync(artifacts, { recursive: true })
    // The shop's simulator runs on the real clock (processing takes 400 ms): the page waits up to
    // 12 s, 30 times that, before "pending", so a loaded machine never turns an approval into
    // "pending"; the slow test card stays processing for 10 simulated minutes, far past it.
    shop = await startShop({ port: 0, awaitDeadlineMs: 12_000 })
    browser = await chromium.launch({
      executablePath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]
    })
  }, 120_000)

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

  /** Waits for the result page; its heading, status, reason and retry link. */
  const result = async (page: Page, shot: string) => {
    await page.waitForSelector("#final-status", { timeout: 60_000 })
    await page.screenshot({ path: `${artifacts}${shot}-result.png`, fullPage: true })
    // A result page answers a POST: /order shows the same page again (one status query).
    const ids = { client_orderid: (await page.textContent("#client-orderid"))!, orderid: (await page.textContent("#orderid"))! }
    resultUrls[shot] = `${shop.url}/order?${new URLSearchParams(ids)}`
    return {
      heading: (await page.textContent("#result-heading"))?.trim(),
      title: await page.title(),
      status: (await page.textContent("#final-status"))?.trim(),
      reason: (await page.locator("#reason").count()) > 0 ? (await page.textContent("#reason"))?.replace(/\s+/g, " ").trim() : undefined,
      retry: (await page.locator("#retry").count()) > 0 ? { text: (await page.textContent("#retry"))?.trim(), href: await page.getAttribute("#retry", "href") } : undefined,
      html: await page.content()
    }
  }

  it("buys with 4111111111111111: the page says approved, thanks, and offers no retry", async () => {
    const page = await browser.newPage()
    await buy(page, "4111111111111111", "approved")
    const r = await result(page, "approved")
    expect(r.heading).toBe("Payment approved")
    expect(r.title).toMatch(/^Payment approved · /)
    expect(r.status).toBe("approved")
    expect(r.html).toContain("Thank you: your order is paid (24.90 EUR, card 411111******1111)")
    expect(r.retry).toBeUndefined()
    expect(r.html).not.toContain("4111111111111111")
    await page.close()
  }, 120_000)

  it("buys with 4000000000000002: the page says declined, gives the gateway's reason, and the retry link leads back to the shop", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000000002", "declined")
    const r = await result(page, "declined")
    expect(r.heading).toBe("Payment declined")
    expect(r.title).toMatch(/^Payment declined · /)
    expect(r.status).toBe("declined")
    expect(r.reason).toBe("The gateway's reason: Do not honor (code 05)")
    expect(r.html).not.toMatch(/Thank you/i)
    expect(r.retry).toEqual({ text: "Try again", href: "/" })
    await page.click("#retry")
    await page.waitForSelector("#buy")
    expect(new URL(page.url()).pathname).toBe("/")
    await page.close()
  }, 120_000)

  it("buys with 4000000000003220 and passes the 3-D Secure challenge: approved", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000003220", "3ds-pass")
    await page.waitForSelector("#pass")
    await page.screenshot({ path: `${artifacts}3ds-pass-challenge.png`, fullPage: true })
    await page.click("#pass")
    const r = await result(page, "3ds-pass")
    expect([r.heading, r.status]).toEqual(["Payment approved", "approved"])
    await page.close()
  }, 120_000)

  it("buys with 4000000000003220 and fails the challenge: declined, with the 3-D Secure reason", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000003220", "3ds-fail")
    await page.waitForSelector("#fail")
    await page.click("#fail")
    const r = await result(page, "3ds-fail")
    expect([r.heading, r.status]).toEqual(["Payment declined", "declined"])
    expect(r.reason).toBe("The gateway's reason: 3-D Secure authentication failed (code 3ds-failed)")
    expect(r.retry?.text).toBe("Try again")
    await page.close()
  }, 120_000)

  it("buys with 4000000000000259 (stays processing): the page says pending, and Check again asks the gateway again", async () => {
    const page = await browser.newPage()
    await buy(page, "4000000000000259", "pending")
    const r = await result(page, "pending")
    expect(r.heading).toBe("Payment pending")
    expect(r.status).toBe("processing")
    expect(r.html).not.toMatch(/Thank you/i)
    expect(r.retry?.text).toBe("Check again")
    expect(r.retry?.href).toMatch(/^\/order\?client_orderid=shop-[^&]+&orderid=\d+$/)
    await page.click("#retry")
    await page.waitForSelector("#result-heading")
    expect(new URL(page.url()).pathname).toBe("/order")
    expect(await page.textContent("#result-heading")).toBe("Payment pending")
    await page.close()
  }, 120_000)

  it("lists the verified callbacks of the final orders", async () => {
    const page = await browser.newPage()
    // The four final orders' callbacks come on the simulator's real clock: wait for them, with a
    // deadline that only guards against a hang.
    const deadline = Date.now() + 90_000
    while (shop.callbacks.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200))
    await page.goto(`${shop.url}/callbacks`)
    await page.screenshot({ path: `${artifacts}callbacks.png`, fullPage: true })
    expect(shop.callbacks.map((c) => c.cb.status).sort()).toEqual(["approved", "approved", "declined", "declined"])
    expect(await page.locator("#log tr").count()).toBe(4)
    await page.close()
  }, 120_000)

  describe("layout and accessibility at 390 px and 1440 px", () => {
    const pages = () => ({ product: shop.url, callbacks: `${shop.url}/callbacks`, error: `${shop.url}/no-such-page` })

    for (const [width, viewport] of [["390", PHONE], ["1440", DESKTOP]] as const) {
      it(`at ${width} px: no page is wider than the screen, and axe finds 0 violations on each`, async () => {
        const context = await browser.newContext({ viewport })
        const page = await context.newPage()
        const found: Record<string, Array<AxeViolation>> = {}
        const wide: Record<string, number> = {}
        const targets: Record<string, string> = { ...pages() }
        for (const kind of ["approved", "declined", "pending"]) {
          const u = resultUrls[kind]
          if (u === undefined) throw new Error(`no ${kind} result page was seen`)
          targets[kind] = u
        }
        for (const [name, url] of Object.entries(targets)) {
          await page.goto(url)
          await page.screenshot({ path: `${artifacts}${name}-${width}.png`, fullPage: true })
          wide[name] = await overflow(page)
          found[name] = await axe(page)
        }
        expect(Object.keys(found).sort()).toEqual(["approved", "callbacks", "declined", "error", "pending", "product"])
        expect(wide).toEqual(Object.fromEntries(Object.keys(wide).map((k) => [k, 0])))
        expect(found).toEqual(Object.fromEntries(Object.keys(found).map((k) => [k, []])))
        await context.close()
      }, 180_000)
    }

    it("at 390 px the product grid stacks and the title wraps inside its card", async () => {
      const context = await browser.newContext({ viewport: PHONE })
      const page = await context.newPage()
      await page.goto(shop.url)
      const box = async (selector: string) => (await page.locator(selector).first().boundingBox())!
      const art = await box(".art")
      const title = await box("h1")
      const card = await box(".product")
      expect(title.y).toBeGreaterThanOrEqual(art.y + art.height) // below the picture, not beside it
      expect(title.x + title.width).toBeLessThanOrEqual(card.x + card.width)
      expect(card.x + card.width).toBeLessThanOrEqual(PHONE.width)
      await context.close()
    }, 120_000)

    it("at 1440 px the product grid has the picture beside the text", async () => {
      const context = await browser.newContext({ viewport: DESKTOP })
      const page = await context.newPage()
      await page.goto(shop.url)
      const art = (await page.locator(".art").boundingBox())!
      const title = (await page.locator("h1").boundingBox())!
      expect(title.x).toBeGreaterThanOrEqual(art.x + art.width)
      await context.close()
    }, 120_000)
  })

  it("keeps the screenshots as test artifacts", () => {
    for (const f of ["declined-result.png", "pending-result.png", "product-390.png", "product-1440.png", "declined-390.png", "callbacks-390.png"]) {
      expect(existsSync(`${artifacts}${f}`), f).toBe(true)
    }
  })
})
