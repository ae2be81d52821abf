/**
 * Same-process A/B of the client bench's contenders: short interleaved rounds, CPU µs per sale,
 * median of the rounds after the first third (JIT warm-up). Not part of `pnpm bench`; a quicker,
 * load-tolerant check while working on the client's hot path.
 *
 *   node --conditions=@paykit/source --import tsx bench/client/ab.ts [bare,timeout,promise,effect,runpromise,floor,old] [inFlight] [rounds] [oldSrc]
 *
 * `effect` is the Effect API as the client bench's goal counts it: `yield* pay.sale(input)` in one
 * Effect program's fibers (one per call in flight). `runpromise` is the same API entered from a
 * Promise on every call (`Effect.runPromise` per sale), and `floor` that around the Promise facade:
 * what any Effect entry over the same path costs at least. `timeout` is the goal baseline (a
 * hand-written call with `AbortSignal.timeout` per attempt).
 * `old` is the Promise facade of another copy of the client's sources, e.g. a commit's
 * (`mkdir -p packages/client/.old && git archive <commit> src | tar -x -C packages/client/.old`,
 * then `oldSrc` = `packages/client/.old/src`; inside the worktree, so its imports resolve).
 */
import { createHash } from "node:crypto"
import { createPayClient, makePayClient, resolveConfig } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import * as Effect from "effect/Effect"
const BASE_URL = "http://127.0.0.1:4010"
const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })
const options = { baseUrl: BASE_URL, login: testMerchant.login, controlKey: testMerchant.controlKey, privateKeyPem: testMerchant.privateKeyPem, endpointId: testMerchant.endpointId, fetch: sim.fetch }
const pay = createPayClient(options)
const service = makePayClient(resolveConfig(options))
const saleUrl = `${BASE_URL}/api/v2/sale/${testMerchant.endpointId}`
async function bare(signal?: AbortSignal) {
  const input = requests.sale()
  const [units, cents = ""] = input.amount.split(".")
  const minor = String(BigInt(units! + cents.padEnd(2, "0")))
  const control = createHash("sha1").update(`${testMerchant.endpointId}${input.client_orderid}${minor}${input.email}${testMerchant.controlKey}`).digest("hex")
  const request = new Request(saleUrl, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/vnd.pay+json" }, body: new URLSearchParams({ ...input, control }) })
  const res = await (signal === undefined ? sim.fetch(request) : sim.fetch(request, { signal }))
  const reply = JSON.parse(await res.text())
  if (res.status !== 200 || reply.type !== "async-response") throw new Error("x")
  return String(reply["paynet-order-id"])
}
const viaPromise = async () => (await pay.sale(requests.sale()))["paynet-order-id"]!
const viaRunPromise = async () => (await Effect.runPromise(service.sale(requests.sale())))["paynet-order-id"]!
const oldSrc = process.argv[5]
const payOld = oldSrc === undefined ? undefined : ((await import(new URL(`../../${oldSrc}/index.ts`, import.meta.url).href)) as { createPayClient: typeof createPayClient }).createPayClient(options)
const viaOld = async () => (await payOld!.sale(requests.sale()))["paynet-order-id"]!
// The goal baseline of docs/decisions.md#20-speed-against-a-careful-hand-written-call: a timeout signal per attempt, beside the request.
const withTimeout = () => bare(AbortSignal.timeout(30_000))
// The floor of any Effect entry: `Effect.runPromise` around the Promise facade.
const viaFloor = async () => (await Effect.runPromise(Effect.promise(() => pay.sale(requests.sale()))))["paynet-order-id"]!
const fns = { bare: () => bare(), timeout: withTimeout, promise: viaPromise, runpromise: viaRunPromise, floor: viaFloor, old: viaOld } as Record<string, () => Promise<string>>
/** `inFlight` fibers of one Effect program, each yielding sales until `end`; returns how many. */
const program = async (inFlight: number, end: number) => {
  let done = 0
  const worker = Effect.gen(function* () {
    while (performance.now() < end) {
      yield* service.sale(requests.sale())
      done++
    }
  })
  await Effect.runPromise(Effect.all(Array.from({ length: inFlight }, () => worker), { concurrency: "unbounded", discard: true }))
  return done
}
const which = (process.argv[2] ?? "bare,promise,effect").split(",")
const inFlight = Number(process.argv[3] ?? 1)
const rounds = Number(process.argv[4] ?? 12)
const res: Record<string, number[]> = {}
for (let r = 0; r < rounds; r++) {
  for (const name of which) {
    sim.reset()
    let done = 0
    const end = performance.now() + 400
    const c0 = process.cpuUsage()
    if (name === "effect") done = await program(inFlight, end)
    else {
      const fn = fns[name]!
      await Promise.all(Array.from({ length: inFlight }, async () => { while (performance.now() < end) { await fn(); done++ } }))
    }
    const c = process.cpuUsage(c0)
    if (r >= rounds / 3) (res[name] ??= []).push((c.user + c.system) / done)
    if (process.env.TRACE) console.log(r, name, ((c.user + c.system) / done).toFixed(1), done)
  }
}
const med = (a: number[]) => a.slice().sort((x, y) => x - y)[a.length >> 1]!
const base = med(res[which[0]!]!)
for (const name of which) console.log(name.padEnd(8), med(res[name]!).toFixed(1), "µs/sale (median)  ratio", (base / med(res[name]!)).toFixed(3), " min", Math.min(...res[name]!).toFixed(1))
await sim.close()
