/**
 * `paykit-sim`: the simulator as a process, on the real clock. Prints
 * `PayKit simulator listening on http://HOST:PORT` once it accepts requests, then the test
 * merchant's credentials, then one line per request (unless `--quiet`). With `--state FILE` it
 * starts from the snapshot in FILE when the file exists, and writes its snapshot there on SIGINT /
 * SIGTERM: a restart keeps the state. `--help` lists every flag and test route.
 *
 * @packageDocumentation
 */
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createSimulator } from "./simulator/create"
import { testMerchant } from "./fixtures/test-merchant"
import { formatRequestLine, type RequestRecord } from "./http/request-log"
import { DEFAULT_LIMITS, type RequestLimits } from "./http/edge"
import { isLoopback } from "./http/net-address"
import type { RateLimit } from "./http/fair-use"
import type { MerchantConfig } from "./auth/merchant"
import type { SimulatorOptions } from "./simulator/simulator"
import type { RetentionPolicy } from "./state/retention"
import type { SimulatorSnapshot } from "./snapshot/format"
import { runProxyMode } from "./proxy/cli"

/** `paykit-sim --help`. */
export const HELP = `paykit-sim: the PayKit gateway simulator (test use only)

Usage: paykit-sim [flags]

  --port N                 port to listen on (default 4010; 0 picks a free one)
  --host H                 address to listen on (default 127.0.0.1; 0.0.0.0 with --shared)
  --config FILE            JSON: { "merchants": [...], "processingDelayMs": N, "callbackTargets": [...],
                           "limits": {...}, "rateLimit": {...} } (see the testkit README); a merchant's
                           "callbackControlKey" signs its callbacks with another (older) key
  --state FILE             start from the snapshot in FILE if it exists; write it there on exit
  --quiet                  no request log (test-route use is still logged when the test routes are
                           reachable beyond loopback: --shared, --expose-test-routes, another --host)
  --expose-test-routes     serve the test routes and dashboard on a non-loopback address without a token
  --shared                 a sandbox for a team: listen beyond loopback (0.0.0.0 unless --host), test
                           routes and dashboard only with Authorization: Bearer <admin token>
  --admin-token TOKEN      the admin token of --shared (or PAYKIT_SIM_ADMIN_TOKEN); without it one is
                           generated and printed once
  --callback-allow X       also deliver callbacks to X: a host name, *.suffix, an address or a CIDR
                           range (repeatable; loopback is always allowed; link-local and metadata
                           addresses such as 169.254.169.254 only when named by address or range)
  --body-limit BYTES       largest request body (default ${DEFAULT_LIMITS.bodyBytes}; k and m suffixes: 64k); larger is 413
  --headers-timeout MS     time to send the headers (default ${DEFAULT_LIMITS.headersTimeoutMs}); later is 408
  --request-timeout MS     time to send the whole request (default ${DEFAULT_LIMITS.requestTimeoutMs}); later is 408
  --rate-limit N[/BURST]   fair use: at most N requests/s per merchant, bursts of BURST (default N);
                           over it: 429, error-code rate-limited, Retry-After (default: off)
  --proxy URL              be a checking proxy instead: forward every request to the gateway at URL
                           unchanged, check each request and reply against the spec, log each
                           mismatch (dashboard: /__proxy/ui)
  --record FILE            with --proxy: record the exchanges to FILE (card numbers masked; no key,
                           control or Authorization is written)
  --replay FILE            answer from a recording made with --record instead of a gateway
  --callback-to URL        with --proxy: relay the callbacks the gateway sends to PROXY/__proxy/callback
                           to the merchant's receiver at URL, checking each
  --callback-key-file FILE with --callback-to: check each callback's control with the key in FILE
                           (repeatable: a key rotation's keys, current first; never printed)
  -h, --help               this text

Request log (stdout, one line per request; never card data, keys or digests):
  TIME METHOD OPERATION client_orderid=ID STATUS ERROR-CODE MSms [from ADDRESS]

Test routes (loopback only by default; see --expose-test-routes and --shared):
  POST   /__sim/clock/advance?ms=N        advance the clock, run what falls due → { now }
  GET    /__sim/clock                     → { now }
  POST   /__sim/reset                     forget every order, card ref, nonce, callback and fault
  POST   /__sim/faults                    JSON rule(s) { operation, kind, probability, count, latencyMs }
                                          or { "clear": true }; DELETE /__sim/faults clears
  GET    /__sim/orders                    every order (cards masked, money as major-unit strings)
  GET    /__sim/orders/{orderid}          one order and its transactions
  POST   /__sim/orders/{orderid}/chargeback   charge a settled order back (JSON { "amount": "5.00" } optional)
  GET    /__sim/callbacks                 every callback attempt, its answer, or why it was refused
  GET    /__sim/invariants                broken ledger invariants ([] when all money adds up)
  POST   /__sim/snapshot                  the state as JSON (for --state / createSimulator({ restore }))
  GET    /__sim/ui                        the dashboard
The hosted pages /__sim/form/{orderid} and /__sim/acs/{orderid} are customer pages: always served.
`

interface Args {
  port: number
  host?: string
  config?: string
  state?: string
  quiet: boolean
  expose: boolean
  shared: boolean
  adminToken?: string
  callbackAllow: string[]
  limits: { -readonly [K in keyof RequestLimits]: RequestLimits[K] }
  rateLimit?: RateLimit
  proxy?: string
  record?: string
  replay?: string
  callbackTo?: string
  callbackKeyFiles: string[]
}

function positiveInt(name: string, text: string): number {
  const m = /^([0-9]+)([kKmM]?)$/.exec(text)
  const n = m === null ? NaN : Number(m[1]) * (m[2] === "" ? 1 : /k/i.test(m[2]!) ? 1024 : 1024 * 1024)
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(text)}`)
  return n
}

/** Parses the command line; throws an Error naming the flag and its rule. */
export function parseArgs(argv: ReadonlyArray<string>): Args | "help" {
  const args: Args = { port: 4010, quiet: false, expose: false, shared: false, callbackAllow: [], limits: {}, callbackKeyFiles: [] }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const [name, inline] = flag.includes("=") ? [flag.slice(0, flag.indexOf("=")), flag.slice(flag.indexOf("=") + 1)] : [flag, undefined]
    const value = (): string => {
      const v = inline ?? argv[++i]
      if (v === undefined) throw new Error(`${name} needs a value`)
      return v
    }
    if (name === "--port") {
      const text = value()
      const port = Number(text)
      if (!/^[0-9]+$/.test(text) || port > 65535) throw new Error(`--port must be 0..65535, got ${JSON.stringify(text)}`)
      args.port = port
    } else if (name === "--host") args.host = value()
    else if (name === "--config") args.config = value()
    else if (name === "--proxy") args.proxy = value()
    else if (name === "--record") args.record = value()
    else if (name === "--replay") args.replay = value()
    else if (name === "--callback-to") args.callbackTo = value()
    else if (name === "--callback-key-file") args.callbackKeyFiles.push(value())
    else if (name === "--state") args.state = value()
    else if (name === "--quiet") args.quiet = true
    else if (name === "--expose-test-routes") args.expose = true
    else if (name === "--shared") args.shared = true
    else if (name === "--admin-token") args.adminToken = value()
    else if (name === "--callback-allow") args.callbackAllow.push(value())
    else if (name === "--body-limit") args.limits.bodyBytes = positiveInt(name, value())
    else if (name === "--headers-timeout") args.limits.headersTimeoutMs = positiveInt(name, value())
    else if (name === "--request-timeout") args.limits.requestTimeoutMs = positiveInt(name, value())
    else if (name === "--rate-limit") {
      const text = value()
      const m = /^([0-9]+(?:\.[0-9]+)?)(?:\/([0-9]+))?$/.exec(text)
      if (m === null || Number(m[1]) <= 0) throw new Error(`--rate-limit must be N or N/BURST (requests per second per merchant), got ${JSON.stringify(text)}`)
      args.rateLimit = m[2] === undefined ? { requestsPerSecond: Number(m[1]) } : { requestsPerSecond: Number(m[1]), burst: Number(m[2]) }
    } else if (name === "--help" || name === "-h") return "help"
    else throw new Error(`unknown flag ${name} (paykit-sim --help lists them)`)
  }
  if (args.adminToken !== undefined && !args.shared) throw new Error("--admin-token needs --shared")
  if (args.proxy !== undefined && args.replay !== undefined) throw new Error("--proxy and --replay exclude each other: forward to a gateway, or answer from a recording")
  if (args.record !== undefined && args.proxy === undefined) throw new Error("--record needs --proxy (it records what the gateway answered)")
  if (args.callbackTo !== undefined && args.proxy === undefined) throw new Error("--callback-to needs --proxy")
  if (args.callbackKeyFiles.length > 0 && args.callbackTo === undefined) throw new Error("--callback-key-file needs --callback-to (the callbacks it checks)")
  if ((args.proxy !== undefined || args.replay !== undefined) && (args.config !== undefined || args.state !== undefined || args.shared || args.expose)) {
    throw new Error(`${args.proxy !== undefined ? "--proxy" : "--replay"} runs no simulator: --config, --state, --shared and --expose-test-routes do not apply`)
  }
  if (args.shared && args.expose) throw new Error("--shared and --expose-test-routes exclude each other: shared mode serves the test routes to the admin token only")
  if (args.adminToken !== undefined && args.adminToken.length < 16) throw new Error("--admin-token must be at least 16 characters")
  return args
}

interface ConfigFile {
  merchants?: MerchantConfig[]
  processingDelayMs?: number
  callbackTargets?: string[]
  limits?: RequestLimits
  rateLimit?: RateLimit
  retention?: RetentionPolicy
}

function readConfig(file: string): ConfigFile {
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"))
  if (typeof parsed !== "object" || parsed === null) throw new Error("--config must hold a JSON object")
  const config = parsed as ConfigFile
  if (config.callbackTargets !== undefined && !(Array.isArray(config.callbackTargets) && config.callbackTargets.every((t) => typeof t === "string"))) {
    throw new Error("--config: callbackTargets must be an array of strings (host names, *.suffix, addresses, CIDR ranges)")
  }
  return config
}

/** Writes log lines without letting an unread stdout pipe grow the process without bound. */
function lineWriter(): (line: string) => void {
  let dropped = 0
  return (line) => {
    if (process.stdout.writableLength > 1024 * 1024) {
      dropped++
      return
    }
    if (dropped > 0) {
      process.stdout.write(`(${dropped} request log lines dropped: stdout was not being read)\n`)
      dropped = 0
    }
    process.stdout.write(`${line}\n`)
  }
}

/** Runs the simulator process. */
export async function main(argv: ReadonlyArray<string> = process.argv.slice(2)): Promise<void> {
  const parsed = parseArgs(argv)
  if (parsed === "help") {
    process.stdout.write(HELP)
    return
  }
  const args = parsed
  if (args.proxy !== undefined || args.replay !== undefined) {
    const callbackKeys = args.callbackKeyFiles.map((file) => {
      const key = readFileSync(file, "utf8").trim()
      if (key === "") throw new Error(`--callback-key-file ${file}: empty`)
      return key
    })
    await runProxyMode({
      proxy: args.proxy,
      record: args.record,
      replay: args.replay,
      callbackTo: args.callbackTo,
      callbackKeys,
      port: args.port,
      host: args.host ?? "127.0.0.1",
      quiet: args.quiet,
      bodyLimitBytes: args.limits.bodyBytes,
      write: lineWriter()
    })
    return
  }
  const config: ConfigFile = args.config === undefined ? {} : readConfig(args.config)
  const options: SimulatorOptions = { clock: "real", dashboard: true }
  if (config.merchants !== undefined) options.merchants = config.merchants
  if (config.processingDelayMs !== undefined) options.processingDelayMs = config.processingDelayMs
  options.callbackTargets = [...(config.callbackTargets ?? []), ...args.callbackAllow]
  options.limits = { ...config.limits, ...args.limits }
  const rateLimit = args.rateLimit ?? config.rateLimit
  if (rateLimit !== undefined) options.rateLimit = rateLimit
  const host = args.host ?? (args.shared ? "0.0.0.0" : "127.0.0.1")
  const envToken = process.env["PAYKIT_SIM_ADMIN_TOKEN"]
  const givenToken = args.adminToken ?? (args.shared && envToken !== undefined && envToken !== "" ? envToken : undefined)
  const adminToken = args.shared ? givenToken ?? randomBytes(24).toString("base64url") : undefined
  if (adminToken !== undefined) options.testRoutes = { adminToken }
  else if (args.expose) options.testRoutes = { expose: true }
  const write = lineWriter()
  // Who used a test route is always logged when they are reachable beyond this machine.
  const auditTestRoutes = args.shared || args.expose || !isLoopback(host)
  options.onRequest = (record: RequestRecord) => {
    if (!args.quiet || (auditTestRoutes && record.operation === "test-route")) write(formatRequestLine(record))
  }
  // { "retention": { "maxOrders": N, "maxAgeMs": MS } }: which final orders the process forgets.
  if (config.retention !== undefined) options.retention = config.retention
  const stateFile = args.state
  if (stateFile !== undefined && existsSync(stateFile)) {
    let parsed: unknown
    try {
      parsed = JSON.parse(readFileSync(stateFile, "utf8"))
    } catch (error) {
      throw new Error(`--state ${stateFile}: not a JSON snapshot (${error instanceof Error ? error.message : String(error)})`)
    }
    options.restore = parsed as SimulatorSnapshot
  }
  const sim = createSimulator(options)
  const server = await sim.listen({ port: args.port, host })
  process.stdout.write(`PayKit simulator listening on ${server.url}\n`)
  if (adminToken !== undefined && givenToken === undefined) {
    process.stdout.write(`Admin token (test routes and dashboard; send Authorization: Bearer <token>; shown once): ${adminToken}\n`)
  }
  if (args.shared) {
    const allowed = options.callbackTargets.length === 0 ? "loopback only" : `loopback, ${options.callbackTargets.join(", ")}`
    process.stdout.write(`Shared mode: test routes need the admin token; callbacks go to ${allowed}${rateLimit === undefined ? "" : `; fair use ${rateLimit.requestsPerSecond} requests/s per merchant`}\n`)
  }
  if (options.restore !== undefined) {
    process.stdout.write(`Restored ${options.restore.orders.length} orders from ${stateFile}\n`)
  }
  if (config.merchants === undefined) {
    const keyFile = join(tmpdir(), "paykit-sim-test-merchant.key.pem")
    writeFileSync(keyFile, testMerchant.privateKeyPem, { mode: 0o600 })
    process.stdout.write(
      [
        "Test merchant (TEST-ONLY credentials):",
        `  login:             ${testMerchant.login}`,
        `  control key:       ${testMerchant.controlKey}`,
        `  endpoint id:       ${testMerchant.endpointId}`,
        `  endpoint group id: ${testMerchant.endpointGroupId}`,
        `  RSA private key:   ${keyFile} (also testMerchant.privateKeyPem in @paykit/testkit)`,
        ""
      ].join("\n")
    )
  } else {
    process.stdout.write(`Merchants: ${config.merchants.map((m) => m.login).join(", ")}\n`)
  }
  const stop = () => {
    if (stateFile !== undefined) {
      // Snapshot first, then close (close() freezes the state, so nothing changes in between).
      const snapshot = sim.snapshot()
      const temporary = `${stateFile}.${process.pid}.tmp`
      try {
        writeFileSync(temporary, JSON.stringify(snapshot), { mode: 0o600 })
        renameSync(temporary, stateFile)
        process.stdout.write(`State (${snapshot.orders.length} orders) written to ${stateFile}\n`)
      } catch (error) {
        process.stderr.write(`paykit-sim: could not write ${stateFile}: ${error instanceof Error ? error.message : String(error)}\n`)
        void sim.close().then(() => process.exit(1))
        return
      }
    }
    void sim.close().then(() => process.exit(0))
  }
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}

main().catch((error: unknown) => {
  process.stderr.write(`paykit-sim: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
})
