/**
 * Fair use (issue 18, item 3): a per-merchant token bucket on the simulator clock, off by
 * default; an empty bucket is a 429 in the gateway's ServerErrorResponse shape with
 * `error-code: rate-limited` and Retry-After, changes nothing, and does not touch other merchants.
 */
import { Schema } from "effect"
import { ServerErrorResponse } from "@paykit/contracts"
import { afterEach, describe, expect, it } from "vitest"
import { RateLimitError, createSimulator, requests, testMerchantConfig, type Simulator } from "../src/index"
import { FairUse } from "../src/http/fair-use"
import { buildRequest, signedRequest } from "./helpers"

let sim: Simulator | undefined
afterEach(async () => {
  expect(sim?.checkInvariants() ?? []).toEqual([])
  await sim?.close()
  sim = undefined
})

const other = { login: "other-shop", controlKey: "OTHER-SHOP-KEY", endpointIds: [42] }
// The HTTP status only (a 429 does not decode as the operation's reply).
const saleOf = async (endpointId?: number) => ({
  status: (await sim!.fetch(buildRequest(sim!, "SALE", requests.sale(), endpointId === undefined ? {} : { endpointId, controlKey: other.controlKey }))).status
})

describe("fair use", () => {
  it("is off by default: a burst of 50 sales is served", async () => {
    sim = createSimulator({ processingDelayMs: 0 })
    const replies = await Promise.all(Array.from({ length: 50 }, () => saleOf()))
    expect(replies.every((r) => r.status === 200)).toBe(true)
  })

  it("an empty bucket answers 429 rate-limited with Retry-After; it refills on the simulator clock", async () => {
    sim = createSimulator({ processingDelayMs: 0, rateLimit: { requestsPerSecond: 2, burst: 3 }, merchants: [testMerchantConfig, other] })
    for (let i = 0; i < 3; i++) expect((await saleOf()).status).toBe(200)
    const fields = requests.sale()
    const response = await sim.fetch(buildRequest(sim, "SALE", fields))
    expect(response.status).toBe(429)
    expect(response.headers.get("retry-after")).toBe("1")
    expect(response.headers.get("content-type")).toBe("application/vnd.pay+json")
    const body = Schema.decodeUnknownSync(ServerErrorResponse as Schema.Schema<unknown, unknown, never>, { onExcessProperty: "error" })(await response.json()) as Record<string, string>
    expect(body).toMatchObject({ type: "error", "error-code": "rate-limited", "merchant-order-id": fields.client_orderid })
    expect(body["error-message"]).toMatch(/^login: merchant paykit-test is over its fair-use limit \(2 requests\/s, burst 3\); retry after 1 s/)
    // Refused before the handler: no order was made.
    expect(sim.orderByClientOrderId(fields.client_orderid)).toBeUndefined()
    // Another merchant has its own bucket.
    expect((await saleOf(42)).status).toBe(200)
    // Half a second on the simulator clock brings back one token (2/s), not two.
    await sim.clock.advance(500)
    expect((await saleOf()).status).toBe(200)
    expect((await saleOf()).status).toBe(429)
    // A quiet spell refills to the burst, no further.
    await sim.clock.advance(60_000)
    const after = await Promise.all(Array.from({ length: 4 }, () => saleOf()))
    expect(after.map((r) => r.status).sort()).toEqual([200, 200, 200, 429])
  })

  it("unauthenticated requests cannot empty a merchant's bucket", async () => {
    sim = createSimulator({ processingDelayMs: 0, rateLimit: { requestsPerSecond: 1, burst: 1 } })
    for (let i = 0; i < 5; i++) {
      const forged = await signedRequest(sim, "SALE", requests.sale(), { controlKey: "not-the-key" })
      expect(forged.body["error-code"]).toBe("control-mismatch")
    }
    expect((await saleOf()).status).toBe(200)
  })

  it("settings are checked, naming the field", () => {
    expect(() => createSimulator({ rateLimit: { requestsPerSecond: 0 } })).toThrow(RateLimitError)
    expect(() => createSimulator({ rateLimit: { requestsPerSecond: 5, burst: 0.5 } })).toThrow(/rateLimit\.burst: must be a number ≥ 1/)
    expect(() => new FairUse({ requestsPerSecond: Number.NaN }, () => 0)).toThrow(/rateLimit\.requestsPerSecond/)
  })

  it("Retry-After counts up for a slow refill", () => {
    let now = 0
    const buckets = new FairUse({ requestsPerSecond: 0.1, burst: 1 }, () => now)
    buckets.take("m")
    expect(() => buckets.take("m")).toThrow(expect.objectContaining({ code: "rate-limited", httpStatus: 429, retryAfterS: 10 }))
    now = 4_000
    expect(() => buckets.take("m")).toThrow(expect.objectContaining({ retryAfterS: 6 }))
    now = 10_000
    expect(() => buckets.take("m")).not.toThrow()
  })
})
