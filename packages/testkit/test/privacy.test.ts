import { describe, expect, it } from "vitest"
import { createSimulator, requests, testCards, testMerchant } from "../src/index"
import { engineOf } from "../src/simulator/create"
import { callbackReceiver, signedRequest } from "./helpers"

const CVV = "9731"
const PANS = [...testCards.map((c) => c.number), "4242424242424242"]

/** JSON of everything reachable in the engine (Maps, Sets and bigints included). */
function dump(value: unknown): string {
  const seen = new WeakSet<object>()
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return v.toString()
    if (typeof v === "function") return undefined
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return "[seen]"
      seen.add(v)
      if (v instanceof Map) return [...v.entries()]
      if (v instanceof Set) return [...v.values()]
      if (Buffer.isBuffer(v)) return "[buffer]"
    }
    return v
  })
}

describe("card data is never stored or logged unmasked", () => {
  it("after a full run, no state or log contains a test PAN or the CVV", async () => {
    const receiver = callbackReceiver()
    const sim = createSimulator({ callbackFetch: receiver.fetch })
    const login = testMerchant.login
    for (const pan of PANS) {
      const fields = requests.sale({ credit_card_number: pan, cvv2: CVV, server_callback_url: "https://merchant.example/cb" })
      const sale = await signedRequest(sim, "SALE", fields)
      const ids = { orderid: String(sale.body["paynet-order-id"]), client_orderid: fields.client_orderid }
      await sim.clock.advance(11 * 60_000)
      await signedRequest(sim, "CARDREF", requests.createCardRef(ids))
      await signedRequest(sim, "STATUS", { login, ...ids })
    }
    // Errors must not keep it either.
    await signedRequest(sim, "SALE", requests.sale({ credit_card_number: "4111111111111112", cvv2: CVV }))
    await signedRequest(sim, "PAYOUT", requests.payout({ credit_card_number: "5555555555554444" }))
    await signedRequest(sim, "CREATE_RP_V4", requests.createRecurringPayment({ "credit-card-number": "4000000000000002", cvv2: CVV }))
    const form = await signedRequest(sim, "SALEFORM", requests.saleForm())
    await sim.fetch(new Request(String(form.body["redirect-url"]), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ credit_card_number: "4111111111111111", card_printed_name: "A B", expire_month: "12", expire_year: "2099", cvv2: CVV }).toString()
    }))
    await sim.clock.advance(40 * 24 * 3600_000)

    const everything = dump({ orders: sim.orders(), callbacks: sim.callbackAttempts(), engine: engineOf(sim) })
    expect(everything.length).toBeGreaterThan(1000)
    for (const pan of [...PANS, "4111111111111112"]) expect(everything).not.toContain(pan)
    expect(everything).not.toContain(`"${CVV}"`)
    // No CVV field kept, as a JSON key or a form field (a random OAuth nonce may spell "cVv").
    expect(everything).not.toMatch(/["']cvv2?["']\s*:|cvv2?=/i)
    expect(everything).toContain("411111******1111")
    await sim.close()
  })
})
