/**
 * The spec's gateway details as a client sees them against the simulator: wallet payouts and the
 * interface's transfer-by-ref without a source are typed and accepted
 * (docs/decisions.md#d16w-wallet-and-stored-card-payouts,
 * docs/decisions.md#d15r-transfer-by-reference-without-a-source), status by the gateway's
 * `by-request-sn` (docs/decisions.md#d7r-status-by-request-serial-number), and an endpoint id past
 * 2^53 works end to end (docs/decisions.md#d16i-int64-endpoint-ids).
 */
import { testMerchant } from "@paykit/testkit"
import { afterAll, beforeEach, describe, expect, it } from "vitest"
import { coid, saleInput } from "../support/fixtures"
import { setup } from "../support/sim"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const { sim, pay } = setup()
// A reply proven from the gateway's state after an unknown outcome (`Reconciled`) has no
// serial-number of its own; these calls are answered directly, so theirs is there.
const serialOf = (reply: object): string => String((reply as Record<string, unknown>)["serial-number"])
afterAll(() => sim.close())

describe("drift items through the client", () => {
  it("a wallet payout (payout and check/pay) is typed, sent and final", async () => {
    const client_orderid = coid("wallet")
    const ack = await pay.payout({ client_orderid, amount: "7.00", currency: "EUR", wallet_id: "W-777", wallet_provider: "paykit-pay" })
    expect(ack).toMatchObject({ type: "async-response", status: "processing" })
    expect(await pay.awaitFinal({ client_orderid, orderid: ack["paynet-order-id"]! })).toMatchObject({ _tag: "Final", status: "approved" })
    expect(sim.order(ack["paynet-order-id"]!)).toMatchObject({ kind: "payout", paidOut: "7.00" })

    const checked = coid("wallet-check")
    const check = await pay.payoutCheck({ client_orderid: checked, amount: "3.00", currency: "EUR", wallet_id: "W-778" })
    await pay.payoutPay({ login: testMerchant.login, client_orderid: checked, orderid: check["paynet-order-id"]! })
    expect(await pay.awaitFinal({ client_orderid: checked, orderid: check["paynet-order-id"]! })).toMatchObject({ status: "approved" })
  })

  it("a payout with two destinations is refused before sending, by the spec's rule the simulator shares (payout-destination)", async () => {
    const client_orderid = coid("two")
    const error = await pay.payout({ client_orderid, amount: "1.00", currency: "EUR", wallet_id: "W-1", destination_phone: "+4930123456" }).catch((e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InputError" })
    expect(String((error as Error).message)).toContain("got 2: destination_phone and wallet_id")
    expect(sim.orderByClientOrderId(client_orderid)).toBeUndefined()
  })

  it("transfer-by-ref as in the interface's example (no source-card-ref-id)", async () => {
    const ack = await pay.transferByRef({ "client-order-id": coid("tbr"), amount: "2.00", currency: "USD", order_desc: "t", "destination-card-no": "5555555555554444" })
    expect(ack).toMatchObject({ type: "async-response" })
  })

  it("status by-request-sn answers the transaction of that request", async () => {
    const client_orderid = coid("sn")
    const sale = await pay.sale({
      client_orderid, order_desc: "o", amount: "10.00", currency: "USD", address1: "1 Main St", city: "Testville", zip_code: "10115",
      country: "DE", phone: "+49 30 123456", email: "c@example.com", ipaddress: "203.0.113.10", credit_card_number: "4111111111111111",
      card_printed_name: "JOHN DOE", expire_month: "12", expire_year: "30", cvv2: "123", redirect_url: "https://shop.example/done"
    })
    const orderid = sale["paynet-order-id"]!
    await pay.awaitFinal({ client_orderid, orderid })
    const ret = await pay.return({ client_orderid, orderid, amount: "4.00", currency: "USD" })
    await pay.awaitFinal({ client_orderid, orderid })
    const bySn = await pay.status({ login: testMerchant.login, client_orderid, orderid, "by-request-sn": serialOf(ret) })
    expect(bySn).toMatchObject({ status: "approved", "transaction-type": "return", amount: "4.00" })
    const ofSale = await pay.status({ login: testMerchant.login, client_orderid, orderid, "by-request-sn": serialOf(sale) })
    expect(ofSale).toMatchObject({ "transaction-type": "sale", amount: "10.00" })
  })
})

describe("an int64 endpoint id past 2^53 (docs/decisions.md#d16i-int64-endpoint-ids)", () => {
  const ID = "9007199254740993"
  const big = setup(
    { merchants: [{ login: testMerchant.login, controlKey: testMerchant.controlKey, endpointIds: [ID], rsaPublicKeyPem: testMerchant.publicKeyPem }] },
    { endpointId: ID }
  )
  afterAll(() => big.sim.close())

  it("control (C6) and OAuth operations reach the right endpoint", async () => {
    const client_orderid = coid("big")
    const ack = await big.pay.payout({ client_orderid, amount: "1.00", currency: "USD", wallet_id: "W-big" })
    expect((ack as Record<string, unknown>)["end-point-id"]).toBe(ID)
    expect(big.sim.order(ack["paynet-order-id"]!)?.endpointId).toBe(ID)
    const sale = await big.pay.sale(saleInput())
    expect(big.sim.order(sale["paynet-order-id"]!)?.endpointId).toBe(ID)
  })
})
