/**
 * Same-process A/B over loopback HTTP (the simulator listening in this process, as in
 * client.bench.ts): short interleaved rounds of each contender, CPU µs per sale, and each
 * contender's ratio to the first one within the same round (neighbours in time, so a burst of load
 * from another job on this shared machine moves both sides of a ratio alike). Not part of
 * `pnpm bench`; the tool for deciding whether a change to the client's hot path helps over HTTP,
 * where single 1-second rounds differ by ±15% (a round that holds a mark-compact costs ~50 µs more
 * per sale than one that does not).
 *
 *   node --conditions=@paykit/source --import tsx bench/client/http-ab.ts [contenders] [inFlight] [rounds] [salesPerRound] [oldSrc]
 *
 * Defaults: `bare,promise`, 16 in flight, 20 rounds of 1500 sales. Contenders (comma-separated):
 *   bare     the bench's bare HTTP call, as in client.bench.ts (URLSearchParams body, no signal)
 *   timeout  the bench's goal baseline: `bare` with `AbortSignal.timeout` per attempt
 *   str      the same with the body as the client writes it (a string, `serializeForm`)
 *   strsig   `str` with an attempt signal (src/transport/signal.ts) linked into the fetch
 *   send     the client's transport alone (src/transport/fetch.ts: openapi-fetch, attempt signal and
 *            timer, reply parsed), signed by hand as `bare` is: what the client's own steps add
 *            on top of it is `promise` − `send`
 *   promise  the client's Promise facade (`pay.sale`)
 *   old      the Promise facade of another copy of the client's sources, `oldSrc` (as in ab.ts:
 *            `mkdir -p packages/client/.old && git archive <commit> src | tar -x -C packages/client/.old`,
 *            then `packages/client/.old/src`; inside the worktree, so its imports resolve)
 *   sendw    `send` plus the client's input check and fingerprint of the sale, twice, before
 *            sending; `ipsend` and `ipsendw` are the same two against the in-process simulator:
 *            the same work costs several times more per sale over HTTP than in process
 *   `name@2` runs `name` again under its own label (an A/A check of the method).
 *
 * What is compared in one process shares one heap: a change in what the client keeps alive (the
 * ledger's replays, say) shows in both sides' GC and is measured with separate processes instead.
 * Env: `GC=1` adds GC counts and pause time per sale (perf_hooks); `TRACE=1` prints every round;
 * `PROF=<µs>` writes steady-state CPU profiles per contender and round to
 * /tmp/hab-<name>-<round>.cpuprofile (sampling interval in µs) instead of measuring.
 */
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { PerformanceObserver } from "node:perf_hooks"
import { createPayClient, type PayClientOptions } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import { AttemptSignal } from "../../packages/client/src/transport/signal"
import { fingerprintOf } from "../../packages/client/src/intents/ledger"
import { preparedOperations } from "../../packages/client/src/operations/table"
import { makeTransports, serializeForm, type Sender } from "../../packages/client/src/transport/fetch"

const sim = createSimulator({ processingDelayMs: 0, baseUrl: "http://127.0.0.1:4010" })
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
const options: PayClientOptions = {
  baseUrl: server.url, login: testMerchant.login, controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem, endpointId: testMerchant.endpointId
}
const saleUrl = `${server.url}/api/v2/sale/${testMerchant.endpointId}`
const HEADERS = { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/vnd.pay+json" }
let sink = 0

/** A sale and its control, signed by hand (client.bench.ts's `bareSignedSale` without the URLSearchParams). */
function signedSale() {
  const input = requests.sale()
  const [units, cents = ""] = input.amount.split(".")
  const minor = String(BigInt(units! + cents.padEnd(2, "0"))) // USD: exponent 2
  const control = createHash("sha1")
    .update(`${testMerchant.endpointId}${input.client_orderid}${minor}${input.email}${testMerchant.controlKey}`)
    .digest("hex")
  return { input, control }
}

async function orderIdOf(res: Response): Promise<string> {
  const reply = JSON.parse(await res.text()) as { type: string; "paynet-order-id": string | number }
  if (res.status !== 200 || reply.type !== "async-response") throw new Error(`baseline: unexpected reply ${res.status}`)
  return String(reply["paynet-order-id"])
}

// The bench's HTTP baseline (client.bench.ts, createHttpContenders).
async function bare(): Promise<string> {
  const { input, control } = signedSale()
  return orderIdOf(await fetch(saleUrl, { method: "POST", headers: HEADERS, body: new URLSearchParams({ ...input, control }) }))
}

/** The client's transport alone; `work` adds the client's input check and fingerprint (twice). */
const viaSender = (send: Sender, work: boolean) => () =>
  new Promise<string>((resolve, reject) => {
    const { input, control } = signedSale()
    if (work) {
      const op = preparedOperations.SALE
      for (let k = 0; k < 2; k++) {
        const checked = op.decodeInput(input)
        if (checked._tag !== "Right") throw new Error("sale input rejected")
        sink += fingerprintOf(op.id, String(testMerchant.endpointId), checked.right, op.fieldNames).length
      }
    }
    send({ operation: "sale", path: "/api/v2/sale/{endpointId}", endpointId: String(testMerchant.endpointId), body: input, control, timeoutMs: 30_000 }, (result) => {
      if ("_tag" in result) reject(result)
      else resolve(String((result.body as Record<string, unknown>)["paynet-order-id"]))
    })
  })

const pay = createPayClient(options)
const oldSrc = process.argv[6]
const payOld = oldSrc === undefined
  ? undefined
  : ((await import(new URL(`../../${oldSrc}/index.ts`, import.meta.url).href)) as { createPayClient: typeof createPayClient }).createPayClient(options)
const httpSend = makeTransports(server.url, undefined).send
const inProcessSend = makeTransports("http://127.0.0.1:4010", sim.fetch).send

const contenders: Record<string, () => Promise<string>> = {
  bare,
  // The bench's goal baseline (docs/decisions.md#20-speed-against-a-careful-hand-written-call): a timeout signal per attempt.
  timeout: async () => {
    const { input, control } = signedSale()
    return orderIdOf(await fetch(saleUrl, { method: "POST", headers: HEADERS, body: new URLSearchParams({ ...input, control }), signal: AbortSignal.timeout(30_000) }))
  },
  str: async () => {
    const { input, control } = signedSale()
    return orderIdOf(await fetch(saleUrl, { method: "POST", headers: HEADERS, body: serializeForm({ fields: input, control }) }))
  },
  strsig: async () => {
    const { input, control } = signedSale()
    const signal = new AttemptSignal() as unknown as AbortSignal
    return orderIdOf(await fetch(saleUrl, { method: "POST", headers: HEADERS, body: serializeForm({ fields: input, control }), signal }))
  },
  send: viaSender(httpSend, false),
  sendw: viaSender(httpSend, true),
  ipsend: viaSender(inProcessSend, false),
  ipsendw: viaSender(inProcessSend, true),
  promise: async () => (await pay.sale(requests.sale()))["paynet-order-id"]!,
  old: async () => {
    if (payOld === undefined) throw new Error("`old` needs oldSrc (5th argument)")
    return (await payOld.sale(requests.sale()))["paynet-order-id"]!
  }
}
const which = (process.argv[2] ?? "bare,promise").split(",")
const contender = (name: string): (() => Promise<string>) => {
  const fn = contenders[name.split("@")[0]!]
  if (fn === undefined) throw new Error(`unknown contender ${name}`)
  return fn
}
const inFlight = Number(process.argv[3] ?? 16)
const rounds = Number(process.argv[4] ?? 20)
const ops = Number(process.argv[5] ?? 1500)

let gcCount = 0
let gcMs = 0
const gc = process.env["GC"] === undefined ? undefined : new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcCount++
    gcMs += e.duration
  }
})
gc?.observe({ entryTypes: ["gc"] })

// The main thread's own CPU time (ns) where Linux tells it, beside the process's (GC helpers included).
const mainNs = (): number => {
  try {
    return Number(readFileSync("/proc/thread-self/schedstat", "utf8").split(" ")[0])
  } catch {
    return Number.NaN
  }
}

interface Round {
  readonly us: number
  readonly mainUs: number
  readonly gcs: number
  readonly gcUs: number
}
async function round(fn: () => Promise<string>): Promise<Round> {
  sim.reset()
  const n0 = mainNs()
  let started = 0
  const g0 = gcCount
  const m0 = gcMs
  const c0 = process.cpuUsage()
  await Promise.all(Array.from({ length: inFlight }, async () => {
    while (started++ < ops) sink += (await fn()).length
  }))
  const c = process.cpuUsage(c0)
  const mainUs = (mainNs() - n0) / 1000 / ops
  // GC entries are delivered after the fact: let them arrive before reading the counts.
  if (gc !== undefined) await new Promise((r) => setTimeout(r, 20))
  return { us: (c.user + c.system) / ops, mainUs, gcs: (gcCount - g0) / ops, gcUs: ((gcMs - m0) * 1000) / ops }
}

if (process.env["PROF"] !== undefined) {
  const { Session } = await import("node:inspector/promises")
  const session = new Session()
  session.connect()
  await session.post("Profiler.enable")
  await session.post("Profiler.setSamplingInterval", { interval: Number(process.env["PROF"]) || 1000 })
  for (let w = 0; w < 2; w++) for (const name of which) await round(contender(name))
  for (let r = 0; r < rounds; r++) {
    for (const name of which) {
      await session.post("Profiler.start")
      const res = await round(contender(name))
      const { profile } = await session.post("Profiler.stop")
      writeFileSync(`/tmp/hab-${name}-${r}.cpuprofile`, JSON.stringify(profile))
      console.log(name, r, res.us.toFixed(1), "µs/sale", ops, "sales")
    }
  }
  await server.close()
  await sim.close()
  process.exit(0)
}

const med = (a: ReadonlyArray<number>) => {
  const s = a.slice().sort((x, y) => x - y)
  return s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const mean = (a: ReadonlyArray<number>) => a.reduce((x, y) => x + y, 0) / a.length
// Standard error of the mean.
const sem = (a: ReadonlyArray<number>) => Math.sqrt(a.reduce((x, y) => x + (y - mean(a)) ** 2, 0) / (a.length - 1) / a.length)
const per: Record<string, Array<Round>> = {}
// Warm-up: every contender twice, not counted.
for (let w = 0; w < 2; w++) for (const name of which) await round(contender(name))
for (let r = 0; r < rounds; r++) {
  // The order reversed every other round, so that no contender always runs right after another.
  const order = r % 2 === 0 ? which : which.slice().reverse()
  for (const name of order) (per[name] ??= []).push(await round(contender(name)))
  if (process.env["TRACE"] !== undefined) console.log(r, which.map((n) => `${n} ${per[n]!.at(-1)!.us.toFixed(1)} (main ${per[n]!.at(-1)!.mainUs.toFixed(1)})`).join("  "))
}
const first = per[which[0]!]!
console.log(`loopback HTTP, ${inFlight} in flight, ${rounds} rounds × ${ops} sales; CPU µs per sale, median (mean ± s.e.); ratio = ${which[0]} / contender, the median of the same-round ratios`)
for (const name of which) {
  const rs = per[name]!
  const us = rs.map((x) => x.us)
  const ratio = med(rs.map((x, i) => first[i]!.us / x.us))
  const mainRatio = med(rs.map((x, i) => first[i]!.mainUs / x.mainUs))
  const gcPart = gc === undefined ? "" : `; GC ${med(rs.map((x) => x.gcs)).toFixed(3)}/sale, ${med(rs.map((x) => x.gcUs)).toFixed(1)} µs/sale`
  console.log(`  ${name.padEnd(8)} ${med(us).toFixed(1).padStart(6)} µs (${mean(us).toFixed(1)} ± ${sem(us).toFixed(1)})  ratio ${ratio.toFixed(3)};  main thread ${med(rs.map((x) => x.mainUs)).toFixed(1)} µs, ratio ${mainRatio.toFixed(3)}${gcPart}`)
}
gc?.disconnect()
await server.close()
await sim.close()
process.exit(sink > 0 ? 0 : 1)
