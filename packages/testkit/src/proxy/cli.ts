/**
 * `paykit-sim --proxy URL [--record FILE]` and `paykit-sim --replay FILE`: the checking proxy as a
 * process. Prints `PayKit checking proxy listening on http://HOST:PORT` once it accepts requests,
 * then each exchange as the simulator's request line plus one line per mismatch (unless
 * `--quiet`); stops on SIGINT / SIGTERM.
 *
 * @packageDocumentation
 */
import { formatExchangeLines } from "./exchange-log"
import { readRecording } from "./recording"
import { startProxy, type ProxyOptions } from "./server"

/** What `paykit-sim` hands the proxy mode. */
export interface ProxyModeArgs {
  readonly proxy?: string | undefined
  readonly record?: string | undefined
  readonly replay?: string | undefined
  readonly port: number
  readonly host: string
  readonly quiet: boolean
  readonly bodyLimitBytes?: number | undefined
  /** Writes one line (the caller's stdout writer). */
  readonly write: (line: string) => void
}

/** Runs the proxy until SIGINT or SIGTERM. */
export async function runProxyMode(args: ProxyModeArgs): Promise<void> {
  const options: ProxyOptions = {
    port: args.port,
    host: args.host,
    upstream: args.proxy,
    record: args.record,
    replay: args.replay === undefined ? undefined : await readRecording(args.replay),
    bodyLimitBytes: args.bodyLimitBytes,
    onExchange: args.quiet ? undefined : (record) => formatExchangeLines(record).forEach(args.write)
  }
  const proxy = await startProxy(options)
  args.write(`PayKit checking proxy listening on ${proxy.url}`)
  args.write(
    args.proxy !== undefined
      ? `Forwarding to ${args.proxy}; checking every exchange against the spec${args.record === undefined ? "" : `; recording to ${args.record}`} (dashboard: ${proxy.url}/__proxy/ui)`
      : `Replaying ${args.replay} (dashboard: ${proxy.url}/__proxy/ui)`
  )
  const stop = () => void proxy.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}
