/**
 * Client benchmark: sale round trips per second through @paykit/client (Promise facade and the
 * Effect service) against the in-process simulator, beside the baseline a careful engineer writes by
 * hand, in the same run (docs/decisions.md#20-speed-against-a-careful-hand-written-call): the same
 * sale signed with `node:crypto` and sent as a `Request` to the same `sim.fetch` with a timeout
 * signal per attempt (`AbortSignal.timeout`, beside the request as `fetch(request, init)` takes
 * it), the reply parsed with `JSON.parse` and nothing else (no input validation, no reply decoding,
 * no spans). The bare figure without a signal is printed beside it, for information.
 *
 *   node --conditions=@paykit/source --import tsx bench/client/client.bench.ts [--json-only]
 *
 * Goals, each the client's rate over the timeout baseline's in the same run:
 *   in process, 1 and 32 in flight: Promise facade >= 0.85, Effect API >= 0.80
 *   loopback HTTP, 16 in flight: Promise facade >= 0.90 (the simulator listens in this process)
 * The Effect API is measured as an Effect program calls it: `yield* pay.sale(input)` in the
 * program's own fibers (one per call in flight, as an Effect server runs a fiber per request), the
 * program run once per round. Each call still suspends its fiber on the fetch and resumes it on the
 * reply (Effect's scheduler), which a hand-written call awaited in that fiber pays too. Entering
 * Effect from a Promise on every call (`await Effect.runPromise(pay.sale(input))`: a new fiber, its
 * FiberRefs and its scheduler runner per call) is what the Promise facade is for; that figure is
 * printed beside, for information.
 * Rounds: 12 of 0.5 s per contender, contenders interleaved within each round, the simulator reset
 * before each run so its order book stays small. A rate is the median over the rounds; a ratio is
 * the median of each round's own quotient (client over baseline, measured moments apart), so one
 * lucky or unlucky round of either side (a major GC, a neighbour's burst on the shared cores) does
 * not decide it, as it would a best-of-N rate.
 *
 * Clock: round trips per CPU second of this process (user + system), as the signing bench and
 * `openssl speed` count. Everything both sides do runs in this one process (client, simulator,
 * and over HTTP both ends of the socket), so CPU time is the work each side costs; on this 2-core
 * machine shared with other jobs, a wall-clock rate mostly measures how much CPU the scheduler
 * gave the process. Wall-clock rates and ratios are printed beside them.
 *
 * Profile: `node --cpu-prof --conditions=@paykit/source --import tsx bench/client/client.bench.ts
 * --profile promise --seconds 10` runs one contender alone, to compare its top costs per call
 * with the baseline's own. What the client does on its hot
 * path, and why it stays cheap (packages/client/README.md, "A sale from promise.ts to the socket"):
 * no Effect fiber for a first attempt that ends in the reply (any other outcome continues in the
 * Effect steps as the attempt that happened); input checked by a checker compiled from the contract
 * Schema's AST and the reply decoded the same way (the full decoders only on failure, for the exact
 * error); no span under Effect's native tracer; no retry driver until an attempt failed; per-attempt
 * timeout as one abort and a place in one shared timer's deadline list
 * (packages/client/src/transport/timers.ts), not an Effect timeout nor a `setTimeout` each; the
 * attempt's signal beside the `Request` for an injected fetch, and a plain signal where Node's own
 * global `fetch` links one (packages/client/src/transport/signal.ts); openapi-fetch given its
 * serializers, a URL+init `Request` and the body and headers prepared (every request still goes
 * through its `POST`); the idempotency ledger in plain functions, its Deferred made only for a
 * joiner, its succeeded keys' replay records apart from the calls it holds (a ring of `maxDone`:
 * a sale's begin and finish touch a small table, not one of thousands); the result's last response
 * a private field, not a `WeakMap` entry; signers, the RSA key, the fingerprint's field prefixes,
 * the form's encoded field names and the input check's length/pattern rules prepared once.
 */
import { createHash } from "node:crypto"
import { cpus } from "node:os"
import { createPayClient, makePayClient, resolveConfig, type PayClientOptions } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import * as Effect from "effect/Effect"

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

// What a careful hand-written call sets: a deadline on every attempt (the client's default, 30 s).
const ATTEMPT_TIMEOUT_MS = 30_000
const FORM_HEADERS = { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/vnd.pay+json" }

/** The hand-written sale in process: `signal` beside the request, as `fetch(request, init)` takes it. */
async function handSale(signal: AbortSignal | undefined): Promise<string> {
  const body = bareSignedSale()
  const request = new Request(saleUrl, { method: "POST", headers: FORM_HEADERS, body })
  const res = await (signal === undefined ? sim.fetch(request) : sim.fetch(request, { signal }))
  const reply = JSON.parse(await res.text()) as { type: string; "paynet-order-id": string | number }
  if (res.status !== 200 || reply.type !== "async-response") throw new Error(`baseline: unexpected reply ${res.status}`)
  return String(reply["paynet-order-id"])
}

/** The goal baseline: a timeout signal per attempt. */
const withTimeout = (): Promise<string> => handSale(AbortSignal.timeout(ATTEMPT_TIMEOUT_MS))
/** For information: the same call without any deadline. */
const bare = (): Promise<string> => handSale(undefined)

async function viaPromise(): Promise<string> {
  const reply = await pay.sale(sale())
  return reply["paynet-order-id"]!
}

/** For information: the Effect API entered from a Promise on every call (a fiber per call). */
async function viaRunPromise(): Promise<string> {
  const reply = await Effect.runPromise(service.sale(sale()))
  return reply["paynet-order-id"]!
}

/** The loopback HTTP contenders: both send through Node's global fetch to the listening simulator. */
function createHttpContenders(url: string) {
  const httpPay = createPayClient({ ...options, baseUrl: url, fetch: undefined })
  const httpSaleUrl = `${url}/api/v2/sale/${testMerchant.endpointId}`
  const handHttp = async (signal: AbortSignal | undefined): Promise<string> => {
    const res = await fetch(httpSaleUrl, { method: "POST", headers: FORM_HEADERS, body: bareSignedSale(), signal: signal ?? null })
    const reply = JSON.parse(await res.text()) as { type: string; "paynet-order-id": string | number }
    if (res.status !== 200 || reply.type !== "async-response") throw new Error(`baseline: unexpected reply ${res.status}`)
    return String(reply["paynet-order-id"])
  }
  const viaHttpPromise = async () => (await httpPay.sale(sale()))["paynet-order-id"]!
  return { timeout: () => handHttp(AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)), bare: () => handHttp(undefined), promise: viaHttpPromise }
}

// ---- measurement -----------------------------------------------------------------------------------
let sink = 0
const cpuSeconds = () => {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}
/** Round trips per CPU second and per wall second over `seconds` of wall time. */
interface Rate {
  readonly cpu: number
  readonly wall: number
}
async function roundTrips(fn: () => Promise<string>, seconds: number, inFlight: number): Promise<Rate> {
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
  const cpu0 = cpuSeconds()
  await Promise.all(Array.from({ length: inFlight }, worker))
  return { cpu: done / (cpuSeconds() - cpu0), wall: done / ((performance.now() - start) / 1000) }
}
/**
 * {@link roundTrips} for the Effect API in an Effect program: `inFlight` fibers of one program, each
 * yielding `pay.sale(input)` in a loop until the deadline, as a merchant's program writes it; the
 * program started once.
 */
async function programRoundTrips(seconds: number, inFlight: number): Promise<Rate> {
  sim.reset()
  const deadline = performance.now() + seconds * 1000
  let done = 0
  const worker = Effect.gen(function* () {
    while (performance.now() < deadline) {
      const reply = yield* service.sale(sale())
      sink += reply["paynet-order-id"]!.length
      done++
    }
  })
  const start = performance.now()
  const cpu0 = cpuSeconds()
  await Effect.runPromise(Effect.all(Array.from({ length: inFlight }, () => worker), { concurrency: "unbounded", discard: true }))
  return { cpu: done / (cpuSeconds() - cpu0), wall: done / ((performance.now() - start) / 1000) }
}
/** One contender: how it runs `seconds` of sales with `inFlight` in flight. */
type Contender = (seconds: number, inFlight: number) => Promise<Rate>
const promiseContender = (fn: () => Promise<string>): Contender => (seconds, inFlight) => roundTrips(fn, seconds, inFlight)
const viaEffect: Contender = programRoundTrips

const fmt = (n: number) => n.toFixed(0).padStart(8)

// `--profile <promise|effect|runpromise|timeout|bare> [--seconds N] [--in-flight N] [--http]`: runs one contender
// alone, for `node --cpu-prof`.
// `--http` profiles the loopback HTTP contenders instead (the simulator listening in this process).
const profileAt = process.argv.indexOf("--profile")
if (profileAt > 0) {
  const which = process.argv[profileAt + 1]
  const arg = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name)
    return at > 0 ? Number(process.argv[at + 1]) : fallback
  }
  let run: Contender = which === "effect"
    ? viaEffect
    : promiseContender(which === "bare" ? bare : which === "timeout" ? withTimeout : which === "runpromise" ? viaRunPromise : viaPromise)
  const server = process.argv.includes("--http") ? await sim.listen({ port: 0, host: "127.0.0.1" }) : undefined
  if (server !== undefined) {
    const http = createHttpContenders(server.url)
    run = promiseContender(which === "bare" ? http.bare : which === "timeout" ? http.timeout : http.promise)
  }
  // A short warm-up outside the profile's figures, so that they are the steady state.
  await run(1, arg("--in-flight", 1))
  const rate = await run(arg("--seconds", 10), arg("--in-flight", 1))
  console.log(`profile ${which}${server === undefined ? "" : " (http)"}: ${rate.cpu.toFixed(0)} /CPU s, ${rate.wall.toFixed(0)} /s`)
  await server?.close()
  await sim.close()
  process.exit(0)
}

const TIMEOUT = "fetch + node:crypto + timeout"
const BARE = "bare fetch + node:crypto"
const PROMISE = "client (Promise facade)"
const EFFECT = "client (Effect API)"
const RUN_PROMISE = "client (Effect, runPromise per call)"

/** Each contender's rate in every measured round (contenders interleaved within a round). */
type Rounds = Record<string, Rate[]>

/**
 * Runs the contenders in turn, `rounds` times, `seconds` each, after a short warm-up of each; the
 * simulator is reset before every run.
 */
async function race(contenders: Record<string, Contender>, inFlight: number, rounds: number, seconds: number): Promise<Rounds> {
  const out: Rounds = {}
  for (const run of Object.values(contenders)) await run(0.3, inFlight) // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(contenders)) (out[name] ??= []).push(await run(seconds, inFlight))
  }
  return out
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
/** A contender's median rate over the rounds. */
const rateOf = (rounds: Rounds, name: string): Rate => ({ cpu: median(rounds[name]!.map((r) => r.cpu)), wall: median(rounds[name]!.map((r) => r.wall)) })
/** `name` over `base`: the median, over the rounds, of the two rates' quotient in the same round. */
const pairedRatio = (rounds: Rounds, name: string, base: string): Rate => ({
  cpu: median(rounds[name]!.map((r, i) => r.cpu / rounds[base]![i]!.cpu)),
  wall: median(rounds[name]!.map((r, i) => r.wall / rounds[base]![i]!.wall))
})

const ratio3 = (n: number) => Number(n.toFixed(3))
const goals: Record<string, { goal: number; ratio: number; met: boolean; wallRatio: number; bareRatio: number }> = {}
/** A goal: `name` over the timeout baseline; its ratio over the bare call beside, for information. */
const goal = (what: string, target: number, rounds: Rounds, name: string) => {
  const over = pairedRatio(rounds, name, TIMEOUT)
  const ratio = ratio3(over.cpu)
  goals[what] = { goal: target, ratio, met: ratio >= target, wallRatio: ratio3(over.wall), bareRatio: ratio3(pairedRatio(rounds, name, BARE).cpu) }
}

/** Prints each contender's median rates and its paired ratios over the timeout baseline (and the bare call). */
function report(rounds: Rounds): void {
  for (const name of Object.keys(rounds)) {
    const rate = rateOf(rounds, name)
    const over = pairedRatio(rounds, name, TIMEOUT)
    log(`  ${name.padEnd(38)} ${fmt(rate.cpu)} /CPU s  ratio ${over.cpu.toFixed(3)} [${pairedRatio(rounds, name, BARE).cpu.toFixed(3)}]   (${fmt(rate.wall)} /s  ratio ${over.wall.toFixed(3)})`)
  }
}

/** What results.json keeps of one setting: median rates, and each client's paired ratios. */
function resultOf(rounds: Rounds, clients: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = { baselineOps: Math.round(rateOf(rounds, TIMEOUT).cpu), bareOps: Math.round(rateOf(rounds, BARE).cpu) }
  const wall: Record<string, number> = { baselineOps: Math.round(rateOf(rounds, TIMEOUT).wall), bareOps: Math.round(rateOf(rounds, BARE).wall) }
  for (const [key, name] of Object.entries(clients)) {
    out[`${key}Ops`] = Math.round(rateOf(rounds, name).cpu)
    out[`${key}Ratio`] = ratio3(pairedRatio(rounds, name, TIMEOUT).cpu)
    out[`${key}BareRatio`] = ratio3(pairedRatio(rounds, name, BARE).cpu)
    wall[`${key}Ops`] = Math.round(rateOf(rounds, name).wall)
    wall[`${key}Ratio`] = ratio3(pairedRatio(rounds, name, TIMEOUT).wall)
  }
  return { ...out, wall }
}

const ROUNDS = 12
const ROUND_SECONDS = 0.5
log(`client bench — Node ${process.version}, ${cpus().length} cores; sale round trips against the in-process simulator, per CPU second (per wall second); medians of ${ROUNDS} interleaved rounds of ${ROUND_SECONDS} s, each ratio the median of the rounds' own ratios`)
const results: Record<string, unknown> = {}
const inProcess: Record<string, Contender> = {
  [TIMEOUT]: promiseContender(withTimeout),
  [BARE]: promiseContender(bare),
  [PROMISE]: promiseContender(viaPromise),
  [EFFECT]: viaEffect,
  [RUN_PROMISE]: promiseContender(viaRunPromise)
}
for (const inFlight of [1, 32]) {
  const rounds = await race(inProcess, inFlight, ROUNDS, ROUND_SECONDS)
  log(`\n${inFlight} in flight (ratios over ${TIMEOUT}; over the bare call in brackets):`)
  report(rounds)
  results[`inFlight${inFlight}`] = resultOf(rounds, { promise: PROMISE, effect: EFFECT, runPromise: RUN_PROMISE })
  goal(`client (Promise facade) sale round trip vs fetch + node:crypto + timeout, in process, ${inFlight} in flight`, 0.85, rounds, PROMISE)
  goal(`client (Effect API) sale round trip in an Effect program vs fetch + node:crypto + timeout, in process, ${inFlight} in flight`, 0.8, rounds, EFFECT)
}
// ---- over loopback HTTP: the way a merchant backend really calls a gateway ---------------------------
// Same contenders, but both send through Node's global fetch to the simulator listening on 127.0.0.1,
// so the figure includes what the network stack costs either way.
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
const http = createHttpContenders(server.url)
const overHttp: Record<string, Contender> = {
  [TIMEOUT]: promiseContender(http.timeout),
  [BARE]: promiseContender(http.bare),
  [PROMISE]: promiseContender(http.promise)
}
for (const inFlight of [1, 16]) {
  const rounds = await race(overHttp, inFlight, ROUNDS, ROUND_SECONDS)
  log(`\nover loopback HTTP, ${inFlight} in flight:`)
  report(rounds)
  results[`http${inFlight}`] = resultOf(rounds, { promise: PROMISE })
  if (inFlight === 16) goal("client (Promise facade) over loopback HTTP vs fetch + node:crypto + timeout, 16 in flight", 0.9, rounds, PROMISE)
}
await server.close()

log("\ngoals (ratio per CPU second over the timeout baseline; wall-clock ratio and the ratio over the bare call beside)")
for (const [what, g] of Object.entries(goals)) {
  log(`  ${what}: ${g.ratio.toFixed(3)} (wall ${g.wallRatio.toFixed(3)}; bare ${g.bareRatio.toFixed(3)}), goal >= ${g.goal} ${g.met ? "MET" : "NOT MET"}`)
}
await sim.close()
console.log(JSON.stringify({
  bench: "client",
  node: process.version,
  clock: "round trips per CPU second of this process (user + system); wall-clock figures under `wall`",
  baseline: "hand-written fetch + node:crypto with AbortSignal.timeout per attempt (bare: without a signal)",
  ...results,
  goals,
  sink: sink > 0
}))
