"use strict"
/**
 * A CommonJS consumer of the published packages (release rehearsal): `node consumer-cjs.cjs SIM_URL`.
 * Through the Promise facade: a sale against the running paykit-sim, its awaitFinal and its status;
 * then a simulator in process whose callback reaches the client's callbackHandler once (a
 * redelivery answers 200 without a second hand-off, a forged control 403). Last line `ok …`.
 */
const { createPayClient } = require("@paykit/client")
const { createSimulator, testMerchant } = require("@paykit/testkit")

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

async function main() {
  const simUrl = process.argv[2]
  const pay = createPayClient({ baseUrl: simUrl, ...merchant, poll: { fastIntervalMs: 50 } })
  const client_orderid = `cjs-${Date.now()}`
  const ack = await pay.sale(sale(client_orderid))
  const orderid = ack["paynet-order-id"]
  const final = await pay.awaitFinal({ client_orderid, orderid })
  check(final.status === "approved", `awaitFinal gave ${JSON.stringify(final)}`)
  const status = await pay.status({ client_orderid, orderid })
  check(status.status === "approved", `status gave ${JSON.stringify(status)}`)

  // a callback, in process: the simulator's callback fetch is the client's handler
  let handler
  const delivered = []
  const sim = createSimulator({
    clock: "real",
    processingDelayMs: 50,
    callbackFetch: async (input, init) => {
      const request = new Request(input, init)
      delivered.push(request.clone())
      return handler(request)
    }
  })
  try {
    const local = createPayClient({ baseUrl: "http://paykit-sim.local", ...merchant, fetch: sim.fetch, poll: { fastIntervalMs: 20 } })
    const handed = []
    handler = local.callbackHandler({ onCallback: (cb) => void handed.push(cb) })
    const id2 = `cjs-cb-${Date.now()}`
    const ack2 = await local.sale(sale(id2, { server_callback_url: "http://merchant.example/paykit/callback" }))
    const order2 = ack2["paynet-order-id"]
    await local.awaitFinal({ client_orderid: id2, orderid: order2 })
    const deadline = Date.now() + 10_000
    while (!sim.callbackAttempts().some((a) => a.orderid === order2 && a.outcome === 200)) {
      check(Date.now() < deadline, "no callback answered 200 in 10 s")
      await new Promise((r) => setTimeout(r, 20))
    }
    check(handed.length === 1 && handed[0].orderid === order2, `onCallback saw ${handed.length}`)
    const original = delivered.find((r) => new URL(r.url).searchParams.get("orderid") === order2)
    const again = await handler(new Request(original.url))
    check(again.status === 200 && handed.length === 1, `redelivery answered ${again.status}, ${handed.length} hand-offs`)
    const forged = new URL(original.url)
    forged.searchParams.set("control", "0".repeat(40))
    check((await handler(new Request(forged))).status === 403, "a forged callback was not refused")
  } finally {
    await sim.close()
  }
  console.log(`ok cjs: sale ${orderid} approved, status approved, callback handled once (redelivery 200, forged 403) [node ${process.version}]`)
}
main().catch((e) => {
  console.error(e)
  process.exit(1)
})
