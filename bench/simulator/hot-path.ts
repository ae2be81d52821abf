/**
 * The simulator's own CPU per request, without sockets: the router's hot path (body parsing,
 * validation, control, the operation, the reply's JSON) for the request mix of
 * simulator.bench.ts (a pre-signed status, fresh pre-signed sales), driven in process with a
 * request object whose body is already there. Not a goal of its own and not run by `pnpm bench`
 * (no `.bench.ts`): a steady figure to compare changes by on a machine whose load moves the
 * autocannon bench. Add --cpu-prof to profile just this path.
 *
 * Run from the repo root: node --conditions=@paykit/source --import tsx bench/simulator/hot-path.ts
 * HOT_PATH_REQUESTS (default 200,000) requests per round, HOT_PATH_ROUNDS (default 5) rounds.
 */
import { signControl } from "@paykit/signing"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import { engineOf } from "../../packages/testkit/src/simulator/create"
import { route } from "../../packages/testkit/src/server/router"
import type { SimReply, SimRequest } from "../../packages/testkit/src/http/replies"

const N = Number(process.env["HOT_PATH_REQUESTS"] ?? 200_000)
const ROUNDS = Number(process.env["HOT_PATH_ROUNDS"] ?? 5)
const key = testMerchant.controlKey
const endpointId = testMerchant.endpointId
const HEADERS: Record<string, string> = { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded", host: "127.0.0.1" }

function saleBody(): { body: string; clientOrderId: string } {
  const fields = requests.sale()
  const body = new URLSearchParams({ ...fields, control: signControl("SALE", fields, { key, endpointId }) }).toString()
  // As the server reads it (a flat string decoded from the socket's bytes), not the serializer's rope.
  return { body: Buffer.from(body).toString("utf8"), clientOrderId: fields.client_orderid }
}

/** A request as node-server.ts's NodeRequest gives it: one class, the body read once. */
class BenchRequest implements SimRequest {
  readonly method = "POST"
  readonly url: string
  constructor(path: string, private readonly body: string) {
    this.url = `http://127.0.0.1${path}`
  }
  header(name: string): string | null {
    return HEADERS[name] ?? null
  }
  text(): Promise<string> {
    return Promise.resolve(this.body)
  }
}

const sim = createSimulator({ clock: "real", processingDelayMs: 20, retention: { maxOrders: 5_000_000 } })
const engine = engineOf(sim)!
const salePath = `/api/v2/sale/${endpointId}`
const statusPath = `/api/v2/status/${endpointId}`

const first = saleBody()
const firstReply = await route(engine, new BenchRequest(salePath, first.body), salePath, "")
const orderid = (JSON.parse(firstReply.body) as Record<string, string>)["paynet-order-id"]!
const statusFields = { login: testMerchant.login, client_orderid: first.clientOrderId, orderid }
const statusBody = new URLSearchParams({ ...statusFields, control: signControl("STATUS", statusFields, { key, endpointId }) }).toString()

let failures = 0
function check(reply: SimReply): void {
  if (reply.status !== 200) failures++
}

for (let round = 0; round < ROUNDS; round++) {
  const sales: string[] = []
  for (let i = 0; i < N / 2; i++) sales.push(saleBody().body)
  const cpu = process.cpuUsage()
  const started = performance.now()
  // 100 in flight, as the HTTP server has many requests between its event-loop turns.
  const batch = 100
  for (let i = 0; i < N; i += batch) {
    const pending: Array<SimReply | Promise<SimReply>> = []
    for (let j = i; j < i + batch && j < N; j++) {
      pending.push(j % 2 === 0
        ? route(engine, new BenchRequest(statusPath, statusBody), statusPath, "")
        : route(engine, new BenchRequest(salePath, sales[j >> 1]!), salePath, ""))
    }
    for (const reply of await Promise.all(pending)) check(reply)
  }
  const used = process.cpuUsage(cpu)
  const ms = performance.now() - started
  console.log(`round ${round + 1}: ${((used.user + used.system) / N).toFixed(2)} µs CPU/request, ${(ms * 1000 / N).toFixed(2)} µs wall/request, failures ${failures}`)
}
await sim.close()
