import { testMerchant } from "@paykit/testkit"
import { beforeEach, describe, expect, it } from "vitest"
import { saleInput } from "../support/fixtures"
import { setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

// docs/decisions.md#2-amounts-in-cents: digests carry cents (× 100 for every currency) unless the merchant opts in to the
// ISO exponent; client and gateway must agree, or every JPY/KWD call is a control-mismatch.
const isoMerchant = {
  merchants: [{
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    endpointIds: [testMerchant.endpointId],
    minorUnits: "iso4217" as const
  }]
}

describe("minorUnits", () => {
  it("signs JPY and KWD in cents by default, as the simulator's default merchant verifies", async () => {
    const { pay, sim } = setup()
    const jpy = await pay.sale(saleInput({ amount: "1500", currency: "JPY" }))
    expect(jpy.status).toBe("processing")
    const kwd = await pay.sale(saleInput({ amount: "10.500", currency: "KWD" }))
    expect(sim.order(String(kwd["paynet-order-id"]))?.amount).toBe("10.500")
  })

  it("refuses, before sending, a KWD amount that cents cannot write (never rounded)", async () => {
    const { pay, sim } = setup()
    await expect(pay.sale(saleInput({ amount: "1.234", currency: "KWD" }))).rejects.toMatchObject({ _tag: "InputError" })
    expect(sim.orders()).toHaveLength(0)
  })

  it("signs with the ISO exponent when the merchant opts in (iso4217 on both sides)", async () => {
    const { pay, sim } = setup(isoMerchant, { minorUnits: "iso4217" })
    const kwd = await pay.sale(saleInput({ amount: "1.234", currency: "KWD" }))
    expect(sim.order(String(kwd["paynet-order-id"]))?.amount).toBe("1.234")
  })

  it("a mode that differs from the gateway's is refused by the gateway (control-mismatch)", async () => {
    const { pay } = setup(isoMerchant)
    await expect(pay.sale(saleInput({ amount: "1500", currency: "JPY" }))).rejects.toMatchObject({ _tag: "AuthenticationError" })
  })
})
