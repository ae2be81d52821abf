/**
 * Sale → awaitFinal → return with the Effect API (`PayClient` service and its layer).
 *
 * Run against the simulator:  npx -p @paykit/testkit paykit-sim
 * then, in a project with @paykit/client and effect installed:  npx tsx effect-sale.ts
 * (inside this repository, from packages/client, on the workspace's sources:
 *   node --conditions=@paykit/source --import tsx examples/effect-sale.ts)
 */
import { PayClient, type FetchLike } from "@paykit/client"
import { Effect } from "effect"

/** The flow as an Effect that needs a `PayClient`. */
export const saleThenReturn = Effect.gen(function*() {
  const pay = yield* PayClient
  const client_orderid = `example-${Date.now()}`
  const ack = yield* pay.sale({
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
  const orderid = ack["paynet-order-id"]!
  const final = yield* pay.awaitFinal({ client_orderid, orderid })
  if (final._tag === "ActionRequired") return { final: final._tag, redirectTo: final.redirectTo }
  if (final.outcome !== "approved") return { final: final.outcome }
  const refund = yield* pay.return({ client_orderid, orderid, amount: "10.00", currency: "USD" }, { idempotencyKey: `refund-${client_orderid}` }).pipe(
    // Typed errors: handle a lifecycle refusal by its tag, let everything else fail the program.
    Effect.catchTag("GatewayValidationError", (e) => Effect.succeed({ type: `refused: ${e.errorCode}` })),
    // Not proven either way: retrying later with the same key reconciles before sending.
    Effect.catchTag("OutcomeUnknown", (e) => Effect.succeed({ type: `unknown: ${e.next}` }))
  )
  return { final: final.outcome, orderid, return: refund.type }
})

/** Runs the flow with a layer built from a config object. */
export function main(options: { baseUrl?: string; fetch?: FetchLike } = {}) {
  const layer = PayClient.layer({
    baseUrl: options.baseUrl ?? process.env["PAYKIT_BASE_URL"] ?? "http://127.0.0.1:4010",
    login: "paykit-test",
    controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F",
    endpointId: 1001,
    fetch: options.fetch,
    poll: { fastIntervalMs: 200 }
  })
  return Effect.runPromise(saleThenReturn.pipe(Effect.provide(layer)))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then((r) => console.log(r), (e) => {
    console.error(String(e))
    process.exitCode = 1
  })
}
