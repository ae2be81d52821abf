/**
 * Client benchmark: sale round trips per second through @paykit/client (Promise facade and the
 * Effect service) against the in-process simulator, beside a bare baseline in the same run: the
 * same sale signed with `node:crypto` and sent as a `Request` to the same `sim.fetch`, reply parsed
 * with `JSON.parse` and nothing else (no input validation, no reply decoding, no spans).
 *
 *   node --conditions=@paykit/source --import tsx bench/client/client.bench.ts [--json-only]
 *
 * Goal: client / baseline >= 0.95. Each figure is the best of several rounds, contenders
 * interleaved, the simulator reset before each round so its order book stays small. Sequential
 * (one request in flight) and concurrent (32 in flight) figures are both printed; the ratio of
 * record is the sequential one, where client overhead shows most.
 *
 * Where the client's time goes (µs per sale, best of 5 interleaved rounds against a trivial fetch
 * that returns a fixed reply, 2-core machine; the simulator adds ~45 µs to both sides):
 *   bare Request + JSON.parse                          ~38
 *   + AbortController and timer (per-attempt timeout)  ~10
 *   + openapi-fetch + the Effect.async bridge           ~19
 *   + reply decode by the contract Schema               ~6
 *   + pipeline: input check, signing, span, retry plumbing ~19   → client ≈ 90
 * Already done on the hot path: per-operation data and decoders built once at load, input checked
 * by a checker compiled from the contract Schema's AST (full decoder only on failure), no
 * Effect timeout combinator (it forked a fiber and cost ~80 µs), spans without stack capture,
 * openapi-fetch serializers given once, the RSA KeyObject parsed once.
 */
import { createHash } from "node:crypto"
import { cpus } from "node:os"
import { createPayClient, makePayClient, resolveConfig, type PayClientOptions } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import { Effect } from "effect"

const jsonOnly = process.argv.includes("--json-only")
const log = (line: string) => {
  if (!jsonOnly) console.log(line)
}

const BASE_URL = "http://127.0.0.1:4010"
const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
const options: PayClientOptions = {
  baseUrl: BASE_URL,
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem,
  endpointId: testMerchant.endpointId,
  fetch: sim.fetch
}
const pay = createPayClient(options)
const service = makePayClient(resolveConfig(options))

// The testkit's request builder: complete valid sale fields, a fresh client_orderid each call.
const sale = () => requests.sale()

// ---- baseline: what a hand-written integration does -----------------------------------------------
const saleUrl = `${BASE_URL}/api/v2/sale/${testMerchant.endpointId}`
/** A sale form body signed by hand: C6 = endpointId + client_orderid + minor(amount) + email + key. */
function bareSignedSale(): URLSearchParams {
  const input = sale()
  const [units, cents = ""] = input.amount.split(".")
  const minor = String(BigInt(units! + cents.padEnd(2, "0"))) // USD: exponent 2
  const control = createHash("sha1")
    .update(`${testMerchant.endpointId}${input.client_orderid}${minor}${input.email}${testMerchant.controlKey}`)
    .digest("hex")
  return new URLSearchParams({ ...input, control })
}

async function bare(): Promise<string> {
  const body = bareSignedSale()
  const res = await sim.fetch(new Request(saleUrl, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/vnd.pay+json" },
    body
  }))
  const reply = JSON.parse(await res.text()) as { type: string; "paynet-order-id": string | number }
  if (res.status !== 200 || reply.type !== "async-response") throw new Error(`baseline: unexpected reply ${res.status}`)
  return String(reply["paynet-order-id"])
}

async function viaPromise(): Promise<string> {
  const reply = await pay.sale(sale())
  return reply["paynet-order-id"]!
}

async function viaEffect(): Promise<string> {
  const reply = await Effect.runPromise(service.sale(sale()))
  return reply["paynet-order-id"]!
}

// ---- measurement -----------------------------------------------------------------------------------
let sink = 0
async function roundTrips(fn: () => Promise<string>, seconds: number, inFlight: number): Promise<number> {
  sim.reset()
  const deadline = performance.now() + seconds * 1000
  let done = 0
  const worker = async () => {
    while (performance.now() < deadline) {
      sink += (await fn()).length
      done++
    }
  }
  const start = performance.now()
  await Promise.all(Array.from({ length: inFlight }, worker))
  return done / ((performance.now() - start) / 1000)
}

const contenders = { "bare fetch + node:crypto": bare, "client (Promise facade)": viaPromise, "client (Effect)": viaEffect } as const
type Name = keyof typeof contenders

async function race(inFlight: number, rounds: number, seconds: number): Promise<Record<Name, number>> {
  const best = {} as Record<Name, number>
  for (const [name, fn] of Object.entries(contenders) as Array<[Name, () => Promise<string>]>) await roundTrips(fn, 0.3, inFlight) // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(contenders) as Array<[Name, () => Promise<string>]>) {
      const ops = await roundTrips(fn, seconds, inFlight)
      best[name] = Math.max(best[name] ?? 0, ops)
    }
  }
  return best
}

const fmt = (n: number) => n.toFixed(0).padStart(8)

// `--profile <promise|effect|bare> [--seconds N] [--in-flight N]`: runs one contender alone, for
// `node --cpu-prof` (see BENCHMARKS.md, "Client: where the time goes").
const profileAt = process.argv.indexOf("--profile")
if (profileAt > 0) {
  const which = process.argv[profileAt + 1]
  const fn = which === "bare" ? bare : which === "effect" ? viaEffect : viaPromise
  const arg = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name)
    return at > 0 ? Number(process.argv[at + 1]) : fallback
  }
  const ops = await roundTrips(fn, arg("--seconds", 10), arg("--in-flight", 1))
  console.log(`profile ${which}: ${ops.toFixed(0)} /s`)
  await sim.close()
  process.exit(0)
}
log(`client bench — Node ${process.version}, ${cpus().length} cores; sale round trips/s against the in-process simulator`)
const results: Record<string, unknown> = {}
for (const inFlight of [1, 32]) {
  const best = await race(inFlight, 5, 1)
  const baseline = best["bare fetch + node:crypto"]
  log(`\n${inFlight} in flight:`)
  for (const [name, ops] of Object.entries(best)) log(`  ${name.padEnd(28)} ${fmt(ops)} /s   ratio ${(ops / baseline).toFixed(3)}`)
  results[`inFlight${inFlight}`] = {
    baselineOps: Math.round(baseline),
    promiseOps: Math.round(best["client (Promise facade)"]),
    effectOps: Math.round(best["client (Effect)"]),
    promiseRatio: Number((best["client (Promise facade)"] / baseline).toFixed(3)),
    effectRatio: Number((best["client (Effect)"] / baseline).toFixed(3))
  }
}
// ---- over loopback HTTP: the way a merchant backend really calls a gateway ---------------------------
// Same contenders, but both send through Node's global fetch to the simulator listening on 127.0.0.1,
// so the figure includes what the network stack costs either way.
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
const httpPay = createPayClient({ ...options, baseUrl: server.url, fetch: undefined })
const httpSaleUrl = `${server.url}/api/v2/sale/${testMerchant.endpointId}`
async function bareHttp(): Promise<string> {
  const res = await fetch(httpSaleUrl, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/vnd.pay+json" },
    body: bareSignedSale()
  })
  const reply = JSON.parse(await res.text()) as { type: string; "paynet-order-id": string | number }
  if (res.status !== 200 || reply.type !== "async-response") throw new Error(`baseline: unexpected reply ${res.status}`)
  return String(reply["paynet-order-id"])
}
const viaHttpPromise = async () => (await httpPay.sale(sale()))["paynet-order-id"]!
for (const inFlight of [1, 16]) {
  let baseline = 0
  let client = 0
  await roundTrips(bareHttp, 0.3, inFlight)
  await roundTrips(viaHttpPromise, 0.3, inFlight)
  for (let r = 0; r < 3; r++) {
    baseline = Math.max(baseline, await roundTrips(bareHttp, 1, inFlight))
    client = Math.max(client, await roundTrips(viaHttpPromise, 1, inFlight))
  }
  log(`
over loopback HTTP, ${inFlight} in flight:`)
  log(`  ${"bare fetch + node:crypto".padEnd(28)} ${fmt(baseline)} /s`)
  log(`  ${"client (Promise facade)".padEnd(28)} ${fmt(client)} /s   ratio ${(client / baseline).toFixed(3)}`)
  results[`http${inFlight}`] = { baselineOps: Math.round(baseline), promiseOps: Math.round(client), promiseRatio: Number((client / baseline).toFixed(3)) }
}
await server.close()

const seqResult = results["inFlight1"] as { promiseRatio: number; effectRatio: number }
const ratio = Math.min(seqResult.promiseRatio, seqResult.effectRatio)
log(`\nratio of record (sequential, worse of the two client paths): ${ratio.toFixed(3)} (goal >= 0.95) ${ratio >= 0.95 ? "MET" : "NOT MET"}`)
await sim.close()
console.log(JSON.stringify({ bench: "client", node: process.version, ratio, goal: 0.95, met: ratio >= 0.95, ...results, sink: sink > 0 }))
