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
interface ProxyModeArgs {
  readonly proxy?: string | undefined
  readonly record?: string | undefined
  readonly replay?: string | undefined
  /** The merchant's callback receiver (`--callback-to`). */
  readonly callbackTo?: string | undefined
  /** Keys to check callbacks' control with, current first (read from `--callback-key-file`s). */
  readonly callbackKeys?: ReadonlyArray<string> | undefined
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
    callbackTarget: args.callbackTo,
    callbackKeys: args.callbackKeys === undefined || args.callbackKeys.length === 0 ? undefined : args.callbackKeys,
    onExchange: args.quiet ? undefined : (record) => formatExchangeLines(record).forEach(args.write)
  }
  const proxy = await startProxy(options)
  args.write(`PayKit checking proxy listening on ${proxy.url}`)
  args.write(
    args.proxy !== undefined
      ? `Forwarding to ${args.proxy}; checking every exchange against the spec${args.record === undefined ? "" : `; recording to ${args.record}`}${args.callbackTo === undefined ? "" : `; relaying callbacks from ${proxy.url}/__proxy/callback to ${withoutQuery(args.callbackTo)}${args.callbackKeys?.length ? ` (control checked with ${args.callbackKeys.length} key${args.callbackKeys.length === 1 ? "" : "s"})` : " (control not checked: no key)"}`} (dashboard: ${proxy.url}/__proxy/ui)`
      : `Replaying ${args.replay} (dashboard: ${proxy.url}/__proxy/ui)`
  )
  const stop = () => void proxy.close().then(() => process.exit(0))
  process.once("SIGINT", stop)
  process.once("SIGTERM", stop)
}

/** A URL without its query (a receiver's query may hold a token of its own). */
function withoutQuery(url: string): string {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`
  } catch {
    return "(not a URL)"
  }
}
