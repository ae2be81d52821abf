/**
 * Sale → awaitFinal → return with the Promise facade.
 *
 * Run against the simulator:  npx -p @paykit/testkit paykit-sim
 * then, in a project with @paykit/client and effect installed:  npx tsx promise-sale.ts
 * (inside this repository, from packages/client, on the workspace's sources:
 *   node --conditions=@paykit/source --import tsx examples/promise-sale.ts)
 */
import { createPayClient, isPayClientError, type FetchLike } from "@paykit/client"

/** Runs the flow; `fetch` lets the test suite run it against the in-process simulator. */
export async function main(options: { baseUrl?: string; fetch?: FetchLike } = {}) {
  const pay = createPayClient({
    baseUrl: options.baseUrl ?? process.env["PAYKIT_BASE_URL"] ?? "http://127.0.0.1:4010",
    login: "paykit-test",
    controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F",
    endpointId: 1001,
    fetch: options.fetch,
    poll: { fastIntervalMs: 200 }
  })

  const client_orderid = `example-${Date.now()}`
  const ack = await pay.sale({
    client_orderid,
    order_desc: "Example order",
    amount: "10.00",
    currency: "USD",
    address1: "1 Main St",
    city: "Springfield",
    zip_code: "12345",
    country: "US",
    phone: "5551234567",
    email: "john@example.com",
    ipaddress: "127.0.0.1",
    card_printed_name: "JOHN DOE",
    credit_card_number: "4111111111111111",
    expire_month: "12",
    expire_year: "2030",
    cvv2: "123",
    redirect_url: "https://shop.example.com/return"
  })
  // A reconciled reply (the first send's outcome was unknown) carries the order id too.
  const orderid = ack["paynet-order-id"]!

  const final = await pay.awaitFinal({ client_orderid, orderid })
  if (final._tag === "ActionRequired") return { final: final._tag, redirectTo: final.redirectTo }
  // `outcome` says what happened to the money (voided, refunded, ... are not "approved").
  if (final.outcome !== "approved") return { final: final.outcome }

  // A key of your own (stored with your refund record) makes any retry of this refund a replay.
  const idempotencyKey = `refund-${client_orderid}`
  try {
    const refund = await pay.return({ client_orderid, orderid, amount: "10.00", currency: "USD" }, { idempotencyKey, deadlineMs: 60_000 })
    return { final: final.outcome, orderid, return: refund.type, idempotencyKey: refund.idempotencyKey }
  } catch (error) {
    if (!isPayClientError(error)) throw error
    // Not proven either way: call again later with the same key (it reconciles before sending).
    if (error._tag === "OutcomeUnknown") return { final: final.outcome, orderid, returnUnknown: error.next, mayHaveApplied: error.mayHaveApplied }
    return { final: final.outcome, orderid, returnFailed: error._tag }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then((r) => console.log(r), (e) => {
    console.error(String(e))
    process.exitCode = 1
  })
}
