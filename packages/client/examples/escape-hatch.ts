/**
 * The signed escape hatch, `request()`, with the Promise facade: a loyalty credit, an operation
 * the spec does not have, sent as a money call (signed with its own control field list, run under
 * an idempotency key, reconciled by `client_orderid` if its reply is lost), then a read of the
 * account's balance. The simulator serves both as test-only operations (`/api/v2/x-test/...`).
 *
 * Run against the simulator:  npx -p @paykit/testkit paykit-sim
 * then, in a project with @paykit/client and effect installed:  npx tsx escape-hatch.ts
 * (inside this repository, from packages/client, on the workspace's sources:
 *   node --conditions=@paykit/source --import tsx examples/escape-hatch.ts)
 */
import { createPayClient, isReconciled, lastResponseOf, type FetchLike } from "@paykit/client"

/** Credits a loyalty account and reads its balance; `fetch` lets the test suite run it against the in-process simulator. */
export async function main(options: { baseUrl?: string; fetch?: FetchLike } = {}) {
  const pay = createPayClient({
    baseUrl: options.baseUrl ?? process.env["PAYKIT_BASE_URL"] ?? "http://127.0.0.1:4010",
    login: "paykit-test",
    controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F",
    endpointId: 1001,
    fetch: options.fetch
  })
  const loyalty_account = `LA-${Date.now()}`
  const client_orderid = `credit-${Date.now()}`

  // control = SHA-1(endpointId + client_orderid + amount in cents + control key), as the gateway
  // documents this operation; the client computes it from the list.
  const credit = await pay.request({
    path: "/api/v2/x-test/loyalty-credit/{endpointId}",
    auth: "control",
    controlFields: ["endpointId", "client_orderid", "amount"],
    kind: "money",
    fields: { client_orderid, amount: "2.50", currency: "USD", loyalty_account }
  })
  // Its reply as the gateway sent it, every value a string; had the reply been lost, the order as
  // `status` proved it (`isReconciled` tells the two apart).
  const orderid = isReconciled(credit) ? credit.statusReply["paynet-order-id"] : credit["paynet-order-id"]
  // The credit is an order like any other: awaitFinal polls its status until it is final.
  const final = await pay.awaitFinal({ client_orderid })

  // A read: resent on a transient failure. `login` is in the control, filled from the config.
  const balance = await pay.request({
    path: "/api/v2/x-test/loyalty-balance/{endpointId}",
    auth: "control",
    controlFields: ["login", "loyalty_account", "currency"],
    kind: "read",
    fields: { loyalty_account, currency: "USD" }
  })
  return { orderid, final: final.status, idempotencyKey: credit.idempotencyKey, attempts: lastResponseOf(credit)?.attempts, balance: balance["balance"], credits: balance["credits"] }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then((r) => console.log(r), (e) => {
    console.error(String(e))
    process.exitCode = 1
  })
}
