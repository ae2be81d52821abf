/**
 * An Effect consumer of the published packages (release rehearsal): `node consumer-effect.mjs SIM_URL`.
 * The app's own `effect` (a peer of @paykit/client) runs PayClient: a sale against the running
 * paykit-sim, awaitFinal, status; then a callback from an in-process simulator through the Effect
 * service's callbackHandler (Request → Effect<Response>). Last line `ok …`.
 */
import { PayClient } from "@paykit/client"
import { createSimulator, testMerchant } from "@paykit/testkit"
import * as Effect from "effect/Effect"

const merchant = { login: testMerchant.login, controlKey: testMerchant.controlKey, endpointId: testMerchant.endpointId }
const sale = (client_orderid, extra) => ({
  client_orderid, order_desc: "release rehearsal", amount: "10.00", currency: "USD", address1: "1 Main St",
  city: "Springfield", zip_code: "12345", country: "US", phone: "5551234567", email: "john@example.com",
  ipaddress: "127.0.0.1", card_printed_name: "JOHN DOE", credit_card_number: "4111111111111111",
  expire_month: "12", expire_year: "2030", cvv2: "123", redirect_url: "https://shop.example.com/return", ...extra
})
const check = (cond, what) => {
  if (!cond) throw new Error(what)
}

const simUrl = process.argv[2]
const saleFlow = Effect.gen(function* () {
  const pay = yield* PayClient
  const client_orderid = `effect-${Date.now()}`
  const ack = yield* pay.sale(sale(client_orderid))
  const orderid = ack["paynet-order-id"]
  const final = yield* pay.awaitFinal({ client_orderid, orderid })
  check(final._tag === "Final" && final.status === "approved", `awaitFinal gave ${JSON.stringify(final)}`)
  const status = yield* pay.status({ client_orderid, orderid })
  check(status.status === "approved", `status gave ${JSON.stringify(status)}`)
  return orderid
})
const orderid = await Effect.runPromise(saleFlow.pipe(Effect.provide(PayClient.layer({ baseUrl: simUrl, ...merchant, poll: { fastIntervalMs: 50 } }))))

let handler
const handed = []
const sim = createSimulator({ clock: "real", processingDelayMs: 50, callbackFetch: async (input, init) => Effect.runPromise(handler(new Request(input, init))) })
try {
  const callbackFlow = Effect.gen(function* () {
    const pay = yield* PayClient
    handler = pay.callbackHandler({ onCallback: (cb) => Effect.sync(() => void handed.push(cb)) })
    const client_orderid = `effect-cb-${Date.now()}`
    const ack = yield* pay.sale(sale(client_orderid, { server_callback_url: "http://merchant.example/paykit/callback" }))
    yield* pay.awaitFinal({ client_orderid, orderid: ack["paynet-order-id"] })
    return ack["paynet-order-id"]
  })
  const order2 = await Effect.runPromise(
    callbackFlow.pipe(Effect.provide(PayClient.layer({ baseUrl: "http://paykit-sim.local", ...merchant, fetch: sim.fetch, poll: { fastIntervalMs: 20 } })))
  )
  const deadline = Date.now() + 10_000
  while (!sim.callbackAttempts().some((a) => a.orderid === order2 && a.outcome === 200)) {
    check(Date.now() < deadline, "no callback answered 200 in 10 s")
    await new Promise((r) => setTimeout(r, 20))
  }
  check(handed.length === 1 && handed[0].orderid === order2, `onCallback saw ${handed.length}`)
} finally {
  await sim.close()
}
console.log(`ok effect: sale ${orderid} approved, status approved, callback handled once [node ${process.version}]`)
