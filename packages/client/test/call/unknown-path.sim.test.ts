/**
 * A client whose base URL names no gateway path (a wrong prefix) against the simulator: the 404 is
 * a typed refusal naming the path the request went to, and nothing reaches an order.
 */
import { beforeEach, describe, expect, it } from "vitest"
import { saleInput } from "../support/fixtures"
import { BASE_URL, setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

useTestTime()
beforeEach(startTestTime)

describe("a path the gateway does not serve", () => {
  it("is GatewayValidationError unknown-path naming the path, for a sale and a status, and no order is made", async () => {
    const { pay, sim } = setup({}, { baseUrl: `${BASE_URL}/not-the-gateway` })
    const sale = await pay.sale(saleInput()).then(() => undefined, (e: unknown) => e)
    expect(sale).toMatchObject({ _tag: "GatewayValidationError", errorCode: "unknown-path", category: "validation" })
    expect((sale as Error).message).toContain("/not-the-gateway/api/v2/sale/")
    const status = await pay.status({ client_orderid: "c-1" }).then(() => undefined, (e: unknown) => e)
    expect(status).toMatchObject({ _tag: "GatewayValidationError", errorCode: "unknown-path" })
    expect((status as Error).message).toContain("/not-the-gateway/api/v2/status/")
    expect(sim.orders()).toHaveLength(0)
    expect(sim.requests.entries().map((r) => r.status)).toEqual([404, 404])
  })
})
