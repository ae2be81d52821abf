/**
 * The checking proxy (`paykit-sim --proxy URL`): an HTTP server that forwards every request to an
 * upstream gateway unchanged and sends the upstream's reply back unchanged (method, path, query,
 * headers, Host included, and body bytes as they came: an OAuth signature made for the proxy's URL
 * is what the upstream sees), then judges the exchange against the spec (`check.ts`), logs it with
 * its mismatches (`exchange-log.ts`) and, with `record`, appends it to a recording
 * (`recording.ts`). With `replay` instead of `upstream` it answers from a recording. Its own pages
 * live under `/__proxy/` (`ui`, `exchanges`); everything else, `/__sim/` test routes included, is
 * forwarded.
 *
 * @packageDocumentation
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { operations, type OperationId } from "@paykit/contracts"
import { operationOf, replyFacts } from "../http/request-log"
import { PAY_JSON } from "../http/replies"
import { checkReply, checkRequest, type Mismatch } from "./check"
import { ExchangeLog, exchangesPage, type ExchangeRecord } from "./exchange-log"
import { maskedFields, Replay, RecordingWriter, type RecordedExchange } from "./recording"
import { maskCardRuns } from "./mask"
import { CALLBACK_PATH, checkCallback, relayCallback, type CallbackRelay } from "./callback-relay"

/** Options of {@link startProxy}: exactly one of `upstream` and `replay`. */
export interface ProxyOptions {
  /** The gateway to forward to, e.g. `https://gateway.example` or a `paykit-sim` URL. */
  readonly upstream?: string | undefined
  /** Answer from these recorded exchanges (`readRecording(file)`) instead of forwarding. */
  readonly replay?: ReadonlyArray<RecordedExchange> | undefined
  /** Append every API exchange to this recording file (created or emptied first). */
  readonly record?: string | undefined
  /** Port to listen on (default 0: a free one). */
  readonly port?: number | undefined
  /** Address to listen on (default `127.0.0.1`). */
  readonly host?: string | undefined
  /** Called with each exchange once it is answered and judged. */
  readonly onExchange?: ((record: ExchangeRecord) => void) | undefined
  /**
   * The merchant's callback receiver: callbacks the gateway sends to `PROXY/__proxy/callback` are
   * forwarded there and checked (see `callback-relay.ts`). Without it that path is a 404.
   */
  readonly callbackTarget?: string | undefined
  /** The control key, or a rotation's keys (current first), to check callbacks' `control` with; held in memory only. */
  readonly callbackKeys?: string | ReadonlyArray<string> | undefined
  /** Largest request body accepted, in bytes (default 1 MiB); larger is 413, not forwarded. */
  readonly bodyLimitBytes?: number | undefined
}

/** A running checking proxy. */
export interface CheckingProxy {
  /** The proxy's URL, e.g. `http://127.0.0.1:4011`: point a client's `baseUrl` at it. */
  readonly url: string
  /** The exchanges kept, oldest first, each with its mismatches. */
  exchanges(): ReadonlyArray<ExchangeRecord>
  /** Calls `listener` with each new exchange; returns the function that stops it. */
  subscribe(listener: (record: ExchangeRecord) => void): () => void
  /** Stops the server (open connections are closed). */
  close(): Promise<void>
}

/** A wrong combination of options, naming the option and the rule. */
export class ProxyOptionsError extends Error {
  /** The error's kind, for `catchTag` and `switch`. */
  readonly _tag = "ProxyOptionsError" as const
  constructor(
    /** The option at fault. */
    readonly option: string,
    /** The rule it breaks. */
    readonly rule: string
  ) {
    super(`${option}: ${rule}`)
    this.name = "ProxyOptionsError"
  }
}

interface Answer {
  readonly status: number
  readonly statusMessage?: string | undefined
  /** Raw header list (name, value, name, value, ...). */
  readonly headers: ReadonlyArray<string>
  readonly body: Buffer
  readonly via: ExchangeRecord["via"]
}

/** Starts a checking proxy; resolves once it accepts connections. */
export async function startProxy(options: ProxyOptions): Promise<CheckingProxy> {
  if ((options.upstream === undefined) === (options.replay === undefined)) {
    throw new ProxyOptionsError("upstream", "give exactly one of upstream (forward) and replay (answer from a recording)")
  }
  let upstream: URL | undefined
  if (options.upstream !== undefined) {
    try {
      upstream = new URL(options.upstream)
    } catch {
      throw new ProxyOptionsError("upstream", "is not a URL")
    }
    if (upstream.protocol !== "http:" && upstream.protocol !== "https:") throw new ProxyOptionsError("upstream", "must be an http or https URL")
  }
  const replay = options.replay === undefined ? undefined : new Replay(options.replay)
  const relay = await callbackRelay(options)
  const recorder = options.record === undefined ? undefined : await RecordingWriter.open(options.record)
  // node:https only for an https upstream (the package loads where it is missing).
  const send = upstream?.protocol === "https:" ? (await import("node:https")).request : httpRequest
  const log = new ExchangeLog()
  if (options.onExchange !== undefined) log.subscribe(options.onExchange)
  const limit = options.bodyLimitBytes ?? 1024 * 1024
  const shownUpstream = upstream === undefined ? "(replay)" : upstream.origin + upstream.pathname.replace(/\/+$/, "")

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = req.url ?? "/"
    const path = target.split("?")[0]!
    if (path === CALLBACK_PATH && relay !== undefined) return relayOne(relay, req, res, target, log, limit)
    if (path.startsWith("/__proxy/")) return ownPage(req, res, path, log, shownUpstream)
    const at = Date.now()
    const started = performance.now()
    const body = await readBody(req, limit)
    if (body === undefined) {
      res.writeHead(413, { "content-type": PAY_JSON }).end(JSON.stringify({ type: "validation-error", "serial-number": "0", "error-message": `body: larger than ${limit} bytes; not forwarded`, "error-code": "invalid-field" }))
      return
    }
    const answer = replay !== undefined ? replayed(replay, req.method ?? "GET", target, body) : await forward(send, upstream!, req, target, body)
    res.writeHead(answer.status, answer.statusMessage, answer.headers as Array<string>)
    res.end(answer.body)
    const operation = operationOf(path)
    const operationId = operation in operations ? (operation as OperationId) : undefined
    const bodyText = body.toString("utf8")
    const replyText = answer.body.toString("utf8")
    const contentType = headerOf(answer.headers, "content-type")
    const mismatches: Array<Mismatch> = operationId === undefined || answer.via === "unreachable"
      ? []
      : [
          ...checkRequest({ operationId, method: req.method ?? "GET", header: (name) => headerOf(req.rawHeaders, name), body: bodyText }),
          ...checkReply(operationId, answer.status, contentType, replyText, bodyText)
        ]
    const facts = replyFacts(replyText)
    const record = log.add({
      at,
      method: req.method ?? "GET",
      path,
      operation,
      status: answer.status,
      ms: performance.now() - started,
      mismatches,
      via: answer.via,
      ...(facts.clientOrderId === undefined ? {} : { clientOrderId: facts.clientOrderId }),
      ...(facts.errorCode === undefined ? {} : { errorCode: facts.errorCode })
    })
    if (recorder !== undefined && operationId !== undefined && answer.via !== "unreachable") {
      recorder.append({
        seq: record.seq,
        operation,
        method: req.method ?? "GET",
        path: target,
        request: maskedFields(bodyText),
        reply: { status: answer.status, contentType, body: maskCardRuns(replyText) },
        mismatches
      })
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" })
      res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve())
  })
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  return {
    url: `http://${host}:${address.port}`,
    exchanges: () => log.records(),
    subscribe: (listener) => log.subscribe(listener),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** The callback relay of the options, or undefined; its `send` for the receiver's scheme. */
async function callbackRelay(options: ProxyOptions): Promise<(CallbackRelay & { readonly send: typeof httpRequest }) | undefined> {
  if (options.callbackTarget === undefined) {
    if (options.callbackKeys !== undefined) throw new ProxyOptionsError("callbackKeys", "need callbackTarget (the receiver the callbacks are relayed to)")
    return undefined
  }
  let target: URL
  try {
    target = new URL(options.callbackTarget)
  } catch {
    throw new ProxyOptionsError("callbackTarget", "is not a URL")
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") throw new ProxyOptionsError("callbackTarget", "must be an http or https URL")
  const given = options.callbackKeys
  const keys = given === undefined ? [] : typeof given === "string" ? [given] : [...given]
  if (keys.some((k) => typeof k !== "string" || k === "")) throw new ProxyOptionsError("callbackKeys", "a key is empty")
  const send = target.protocol === "https:" ? (await import("node:https")).request : httpRequest
  return { target, keys, send }
}

/** Relays one callback to the receiver, answers the gateway with the receiver's reply, and logs the judged callback. */
async function relayOne(
  relay: CallbackRelay & { readonly send: typeof httpRequest },
  req: IncomingMessage,
  res: ServerResponse,
  target: string,
  log: ExchangeLog,
  limit: number
): Promise<void> {
  const at = Date.now()
  const started = performance.now()
  const body = await readBody(req, limit)
  if (body === undefined) {
    res.writeHead(413, { "content-type": "text/plain" }).end("callback body too large; not relayed\n")
    return
  }
  const answer = await relayCallback(relay.send, relay, req, target, body)
  res.writeHead(answer.status, answer.headers as Array<string>)
  res.end(answer.body)
  const clientOrderId = new URLSearchParams(answer.fields).get("client_orderid")
  log.add({
    at,
    method: req.method ?? "GET",
    path: CALLBACK_PATH,
    operation: "callback",
    status: answer.status,
    ms: performance.now() - started,
    mismatches: checkCallback(answer.fields, relay.keys),
    via: answer.reached ? "forwarded" : "unreachable",
    ...(clientOrderId === null ? {} : { clientOrderId })
  })
}

/** The body as bytes, or undefined past the limit. */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    let over = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) over = true
      else chunks.push(chunk)
    })
    req.on("end", () => resolve(over ? undefined : Buffer.concat(chunks)))
    req.on("error", reject)
  })
}

/** Sends the request to the upstream exactly as received; its reply as bytes, or a 502 when it does not answer. */
function forward(send: typeof httpRequest, upstream: URL, req: IncomingMessage, target: string, body: Buffer): Promise<Answer> {
  const base = upstream.pathname.replace(/\/+$/, "")
  return new Promise((resolve) => {
    const out = send(
      {
        protocol: upstream.protocol,
        hostname: upstream.hostname.replace(/^\[|\]$/g, ""),
        port: upstream.port === "" ? undefined : Number(upstream.port),
        method: req.method,
        path: base + target,
        // The client's header lines as they came (Host included): nothing is added or rewritten.
        headers: req.rawHeaders,
        setHost: false
      },
      (reply) => {
        const chunks: Array<Buffer> = []
        reply.on("data", (chunk: Buffer) => chunks.push(chunk))
        reply.on("end", () =>
          resolve({ status: reply.statusCode ?? 502, statusMessage: reply.statusMessage, headers: reply.rawHeaders, body: Buffer.concat(chunks), via: "forwarded" })
        )
        reply.on("error", () => resolve(unreachable("the upstream's reply broke off")))
      }
    )
    out.on("error", () => resolve(unreachable("the upstream did not answer")))
    out.end(body)
  })
}

function unreachable(why: string): Answer {
  const text = JSON.stringify({ type: "error", "serial-number": "0", "error-message": `proxy: ${why}`, "error-code": "internal-error" })
  return { status: 502, headers: ["content-type", PAY_JSON], body: Buffer.from(text), via: "unreachable" }
}

/** The recorded reply of a request, or a 404 naming what was not recorded. */
function replayed(replay: Replay, method: string, target: string, body: Buffer): Answer {
  const reply = replay.take(method, target, body.toString("utf8"))
  if (reply === undefined) {
    const text = JSON.stringify({ type: "validation-error", "serial-number": "0", "error-message": `replay: no recorded exchange for ${method} ${operationOf(target.split("?")[0]!)} with this client_orderid`, "error-code": "invalid-field" })
    return { status: 404, headers: ["content-type", PAY_JSON], body: Buffer.from(text), via: "replay" }
  }
  const headers = reply.contentType === null ? [] : ["content-type", reply.contentType]
  return { status: reply.status, headers, body: Buffer.from(reply.body, "utf8"), via: "replay" }
}

/** A header's first value from a raw header list (name, value, ...), by lower-case name. */
function headerOf(raw: ReadonlyArray<string>, name: string): string | null {
  for (let i = 0; i + 1 < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1]!
  return null
}

/** `GET /__proxy/ui` (the dashboard) and `GET /__proxy/exchanges` (JSON); else 404. */
function ownPage(req: IncomingMessage, res: ServerResponse, path: string, log: ExchangeLog, upstream: string): void {
  req.resume()
  if (req.method === "GET" && path === "/__proxy/ui") {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" }).end(exchangesPage(upstream, log.records()))
    return
  }
  if (req.method === "GET" && path === "/__proxy/exchanges") {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ upstream, exchanges: log.records() }))
    return
  }
  res.writeHead(404, { "content-type": "text/plain" }).end("not a page of the proxy: /__proxy/ui, /__proxy/exchanges\n")
}
