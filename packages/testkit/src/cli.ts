/**
 * `paykit-sim [--port N] [--host H] [--config FILE] [--state FILE]`: the simulator as a process, on
 * the real clock. Prints `PayKit simulator listening on http://HOST:PORT` once it accepts requests,
 * then the test merchant's credentials. With `--state FILE` it starts from the snapshot in FILE when
 * the file exists, and writes its snapshot there on SIGINT / SIGTERM: a restart keeps the state.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createSimulator } from "./simulator"
import { testMerchant } from "./fixtures/test-merchant"
import type { MerchantConfig, SimulatorOptions } from "./types"
import type { RetentionPolicy } from "./state/retention"
import type { SimulatorSnapshot } from "./snapshot"

interface Args {
  port: number
  host: string
  config?: string
  state?: string
}

function parseArgs(argv: ReadonlyArray<string>): Args {
  const args: Args = { port: 4010, host: "127.0.0.1" }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!
    const [name, inline] = flag.includes("=") ? [flag.slice(0, flag.indexOf("=")), flag.slice(flag.indexOf("=") + 1)] : [flag, undefined]
    const value = (): string => {
      const v = inline ?? argv[++i]
      if (v === undefined) throw new Error(`${name} needs a value`)
      return v
    }
    if (name === "--port") {
      const port = Number(value())
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error("--port must be 0..65535")
      args.port = port
    } else if (name === "--host") args.host = value()
    else if (name === "--config") args.config = value()
    else if (name === "--state") args.state = value()
    else if (name === "--help" || name === "-h") {
      process.stdout.write("paykit-sim [--port N] [--host H] [--config FILE] [--state FILE]\n")
      process.exit(0)
    } else throw new Error(`unknown flag ${name}`)
  }
  return args
}

function readConfig(file: string): { merchants?: MerchantConfig[]; processingDelayMs?: number; retention?: RetentionPolicy } {
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"))
  if (typeof parsed !== "object" || parsed === null) throw new Error("--config must hold a JSON object")
  return parsed as { merchants?: MerchantConfig[]; processingDelayMs?: number; retention?: RetentionPolicy }
}

/** Runs the simulator process. */
export async function main(argv: ReadonlyArray<string> = process.argv.slice(2)): Promise<void> {
  const args = parseArgs(argv)
  const config = args.config === undefined ? {} : readConfig(args.config)
  const options: SimulatorOptions = { clock: "real" }
  if (config.merchants !== undefined) options.merchants = config.merchants
  if (config.processingDelayMs !== undefined) options.processingDelayMs = config.processingDelayMs
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
  const server = await sim.listen({ port: args.port, host: args.host })
  process.stdout.write(`PayKit simulator listening on ${server.url}\n`)
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
