/**
 * Request hooks and the result's last response with the Promise facade: every attempt logged as a
 * redacted line, the sale's serial number and attempt count read with `lastResponseOf`.
 *
 * Run against the simulator:  npx -p @paykit/testkit paykit-sim
 * then, in a project with @paykit/client and effect installed:  npx tsx hooks.ts
 * (inside this repository, from packages/client, on the workspace's sources:
 *   node --conditions=@paykit/source --import tsx examples/hooks.ts)
 */
import { createPayClient, lastResponseOf, type FetchLike, type PayResponseView } from "@paykit/client"

/** Runs one sale with hooks; `fetch` lets the test suite run it against the in-process simulator. */
export async function main(options: { baseUrl?: string; fetch?: FetchLike; log?: (line: string) => void } = {}) {
  const log = options.log ?? console.log
  const responses: Array<PayResponseView> = []
  const pay = createPayClient({
    baseUrl: options.baseUrl ?? process.env["PAYKIT_BASE_URL"] ?? "http://127.0.0.1:4010",
    login: "paykit-test",
    controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F",
    endpointId: 1001,
    fetch: options.fetch,
    // Each view holds the operation, path, client_orderid, attempt (and, on a response, the HTTP
    // status, duration and serial number): never a card number, a key or the body.
    onRequest: (view) => log(`→ ${view.operation} ${view.path} ${view.client_orderid} #${view.attempt}`),
    onResponse: (view) => {
      responses.push(view)
      log(`← ${view.operation} ${view.status ?? view.error} in ${view.durationMs} ms, serial ${view.serialNumber ?? "-"}`)
    }
  })

  const client_orderid = `hooks-${Date.now()}`
  const sale = await pay.sale({
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
  // The gateway's serial number and the attempts the call took, beside the result.
  const last = lastResponseOf(sale)
  return { type: sale.type, attempts: last?.attempts, serialNumber: last?.serialNumber, responses }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then((r) => console.log({ ...r, responses: r.responses.length }), (e) => {
    console.error(String(e))
    process.exitCode = 1
  })
}
