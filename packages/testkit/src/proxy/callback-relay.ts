/**
 * The checking proxy's callback relay. Callbacks go from the gateway straight to the merchant's
 * `server_callback_url`, so the proxy sees them only when that URL points at it: give the gateway
 * `http://PROXY/__proxy/callback` (a query of your own may follow) and start the proxy with
 * `callbackTarget` (the merchant's real receiver). Each callback is forwarded there with its query
 * (after the target's own query, if any), body and header lines unchanged but `Host` (the
 * receiver's), the receiver's answer goes back to the gateway unchanged,
 * and the callback is judged: its fields by the contracts' `ServerCallback` Schema (unknown extra
 * fields are allowed, as docs/decisions.md#11-callbacks says the gateway sends them), a field sent twice,
 * and, when the proxy was given the control key (one, or a rotation's list), its `control`
 * (SHA-1 of status + orderid + client_orderid + key). The keys are only held in memory: never
 * logged, shown or recorded.
 *
 * @packageDocumentation
 */
import type { IncomingMessage, request as httpRequest } from "node:http"
import type * as Schema from "effect/Schema"
import { ServerCallback } from "@paykit/contracts"
import { verifyCallbackControlWithKeys } from "@paykit/signing"
import { schemaMismatches, type Mismatch } from "./check"

/** The path the gateway calls on the proxy. */
export const CALLBACK_PATH = "/__proxy/callback"

/** How the proxy relays callbacks. */
export interface CallbackRelay {
  /** The merchant's receiver, e.g. `http://127.0.0.1:3000/paykit/callback`. */
  readonly target: URL
  /** The control key, or a rotation's keys (current first); without them the control is not checked. */
  readonly keys: ReadonlyArray<string>
}

/**
 * Judges a callback's fields (query or form text): `ServerCallback` (extra fields allowed), no
 * field twice, and with `keys` its control (the finding names no key; a match by an older key of
 * a rotation is no mismatch).
 */
export function checkCallback(text: string, keys: ReadonlyArray<string>): Array<Mismatch> {
  const found: Array<Mismatch> = []
  const fields: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) {
    if (name in fields) found.push({ side: "request", kind: "rule", field: name.slice(0, 64), rule: "sent more than once" })
    else fields[name] = value
  }
  found.push(...schemaMismatches("request", ServerCallback as unknown as Schema.Schema<unknown, unknown, never>, fields).filter((m) => m.kind !== "extra-field"))
  const signed = { status: fields["status"], orderid: fields["orderid"], client_orderid: fields["client_orderid"] }
  if (keys.length > 0 && signed.status !== undefined && signed.orderid !== undefined && signed.client_orderid !== undefined) {
    const result = verifyCallbackControlWithKeys(signed as { status: string; orderid: string; client_orderid: string }, fields["control"], keys)
    if (!result.ok) {
      const why = result.reason === "mismatch" ? `does not match ${keys.length === 1 ? "the key" : `any of the ${keys.length} keys`}` : result.reason
      found.push({ side: "request", kind: "rule", field: "control", rule: `SHA-1(status + orderid + client_orderid + key): ${why}` })
    }
  }
  return found
}

/** What the relay answers the gateway with, as bytes. */
interface RelayAnswer {
  readonly status: number
  readonly headers: ReadonlyArray<string>
  readonly body: Buffer
  /** The callback's fields as text (query or form), for the judge. */
  readonly fields: string
  readonly reached: boolean
}

/** Forwards one callback to the receiver: same method, headers, body, and the query after the target's own. */
export function relayCallback(send: typeof httpRequest, relay: CallbackRelay, req: IncomingMessage, target: string, body: Buffer): Promise<RelayAnswer> {
  const queryAt = target.indexOf("?")
  const query = queryAt < 0 ? "" : target.slice(queryAt + 1)
  const own = relay.target.search.replace(/^\?/, "")
  const joined = own === "" ? query : query === "" ? own : `${own}&${query}`
  const fields = req.method === "POST" ? body.toString("utf8") : query
  // The Host line is the receiver's (it is another server); every other header line as it came.
  const headers: Array<string> = []
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() !== "host") headers.push(req.rawHeaders[i]!, req.rawHeaders[i + 1]!)
  }
  headers.push("Host", relay.target.host)
  return new Promise((resolve) => {
    const out = send(
      {
        protocol: relay.target.protocol,
        hostname: relay.target.hostname.replace(/^\[|\]$/g, ""),
        port: relay.target.port === "" ? undefined : Number(relay.target.port),
        method: req.method,
        path: `${relay.target.pathname}${joined === "" ? "" : `?${joined}`}`,
        headers,
        setHost: false
      },
      (reply) => {
        const chunks: Array<Buffer> = []
        reply.on("data", (chunk: Buffer) => chunks.push(chunk))
        reply.on("end", () => resolve({ status: reply.statusCode ?? 502, headers: reply.rawHeaders, body: Buffer.concat(chunks), fields, reached: true }))
        reply.on("error", () => resolve({ status: 502, headers: [], body: Buffer.alloc(0), fields, reached: false }))
      }
    )
    out.on("error", () => resolve({ status: 502, headers: [], body: Buffer.alloc(0), fields, reached: false }))
    out.end(req.method === "GET" || req.method === "HEAD" ? undefined : body)
  })
}
