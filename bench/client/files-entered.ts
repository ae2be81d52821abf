/**
 * Which source files of `@paykit/client` one Promise `sale` executes, from `promise.ts` to the
 * transport, counted with V8's precise coverage (a function counts when it ran during the sale).
 * Not a benchmark and not part of `pnpm bench`: a reading aid for the client's hot path
 * (packages/client/README.md, "A sale from promise.ts to the socket"), whose goal is at most 6
 * files.
 *
 *   node --conditions=@paykit/source --import tsx bench/client/files-entered.ts [--http] [--effect] [--json]
 *
 * The client is made and one sale sent before counting, so that what runs once per client or per
 * process (building the operation table, compiling checkers, probing the global `fetch`) is not
 * counted; then the counters are reset and one more sale is sent. `--http` sends it through Node's
 * global `fetch` to the simulator listening on loopback; `--effect` counts the Effect API's
 * `sale` run with `Effect.runPromise` instead of the Promise facade's.
 */
import { Session } from "node:inspector/promises"
import { fileURLToPath } from "node:url"
import { createPayClient, makePayClient, resolveConfig } from "@paykit/client"
import { createSimulator, requests, testMerchant } from "@paykit/testkit"
import * as Effect from "effect/Effect"

const http = process.argv.includes("--http")
const effect = process.argv.includes("--effect")
const sim = createSimulator({ processingDelayMs: 0, baseUrl: "http://127.0.0.1:4010" })
const server = http ? await sim.listen({ port: 0, host: "127.0.0.1" }) : undefined
const options = {
  baseUrl: server?.url ?? "http://127.0.0.1:4010",
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem,
  endpointId: testMerchant.endpointId,
  fetch: server === undefined ? sim.fetch : undefined
}
const pay = createPayClient(options)
const service = makePayClient(resolveConfig(options))
const sale = async (): Promise<string> =>
  (effect ? await Effect.runPromise(service.sale(requests.sale())) : await pay.sale(requests.sale()))["paynet-order-id"]!

interface FunctionCoverage {
  readonly functionName: string
  readonly ranges: ReadonlyArray<{ readonly startOffset: number; readonly endOffset: number; readonly count: number }>
}
const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false })
await sale()
await sale()
// Taking the coverage resets its counters: what the next take reports ran since.
await session.post("Profiler.takePreciseCoverage")
await sale()
const { result } = (await session.post("Profiler.takePreciseCoverage")) as { result: ReadonlyArray<{ url: string; functions: ReadonlyArray<FunctionCoverage> }> }
await session.post("Profiler.stopPreciseCoverage")
session.disconnect()
await server?.close()
await sim.close()

const srcMarker = "/packages/client/src/"
const entered: Array<{ file: string; functions: Array<string> }> = []
for (const script of result) {
  if (!script.url.startsWith("file:")) continue
  const path = fileURLToPath(script.url)
  const at = path.indexOf(srcMarker)
  if (at < 0) continue
  // A function ran when its own range (the first) counts a call; the module's top level is not a call.
  const ran = script.functions.filter((f) => f.functionName !== "" && (f.ranges[0]?.count ?? 0) > 0).map((f) => f.functionName)
  const anonymous = script.functions.filter((f) => f.functionName === "" && f.ranges[0]!.startOffset > 0 && f.ranges[0]!.count > 0).length
  if (ran.length > 0 || anonymous > 0) entered.push({ file: path.slice(at + srcMarker.length), functions: anonymous > 0 ? [...ran, `(${anonymous} anonymous)`] : ran })
}
entered.sort((a, b) => a.file.localeCompare(b.file))
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ sale: effect ? "effect" : "promise", transport: http ? "http" : "in-process", files: entered.length, entered }))
} else {
  console.log(`one ${effect ? "Effect API" : "Promise"} sale (${http ? "loopback HTTP" : "in-process fetch"}) entered ${entered.length} source files of the client:`)
  for (const { file, functions } of entered) console.log(`  ${file.padEnd(28)} ${functions.join(", ")}`)
}
