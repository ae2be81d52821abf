/**
 * A simulator whose callbacks are collected (each answered 200) for a test to deliver itself,
 * shared by the callback suites.
 */
import { createSimulator, type Simulator } from "@paykit/testkit"
import { BASE_URL } from "./sim"

/** The simulator and the query strings of every callback it sent, in order. */
export function collectingSimulator(): { readonly sim: Simulator; readonly sent: Array<string> } {
  const sent: Array<string> = []
  const sim = createSimulator({
    processingDelayMs: 0,
    baseUrl: BASE_URL,
    callbackFetch: (async (input: RequestInfo | URL) => {
      sent.push(new URL(input instanceof Request ? input.url : String(input)).search.slice(1))
      return new Response("OK")
    }) as typeof fetch
  })
  return { sim, sent }
}

/** The callbacks of order `orderid` (of `type`, when given) among `sent`. */
export function callbacksIn(sent: ReadonlyArray<string>, orderid: string, type?: string): Array<string> {
  return sent.filter((q) => {
    const p = new URLSearchParams(q)
    return p.get("orderid") === orderid && (type === undefined || p.get("type") === type)
  })
}
