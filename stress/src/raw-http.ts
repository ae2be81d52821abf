/**
 * A raw HTTP/1.1 client over node:net, for what no HTTP client would send: a Content-Length that
 * lies, a body that trickles or stops, broken framing, huge headers. Used by the edge fuzz and the
 * hostile-traffic run.
 */
import { connect } from "node:net"

/** What came back on the socket. */
export interface RawResult {
  /** HTTP status of the first response, 0 when none arrived. */
  readonly status: number
  readonly headers: string
  readonly body: string
  /** Whether the server closed its side. */
  readonly closed: boolean
  /** Milliseconds from connect to the end of the exchange. */
  readonly ms: number
}

/** How to send the parts. */
export interface RawOptions {
  /** Pause between parts. */
  readonly gapMs?: number
  /** Give up (and destroy the socket) after this long. */
  readonly waitMs?: number
  /** Half-close after the last part: a client that stopped sending. */
  readonly end?: boolean
  /** Wait for the socket to drain between parts (a large body sent as fast as the server reads it). */
  readonly drain?: boolean
}

/** Writes `parts` to `127.0.0.1:port` and reads until the server closes its side or `waitMs` passes. */
export function rawExchange(port: number, parts: ReadonlyArray<string | Uint8Array>, options: RawOptions = {}): Promise<RawResult> {
  const started = performance.now()
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1", allowHalfOpen: true })
    let data = ""
    let closed = false
    let done = false
    socket.setEncoding("latin1")
    socket.on("data", (chunk: string) => {
      // Keep the head and a bounded body: a reply is small, anything else is not worth keeping.
      if (data.length < 64 * 1024) data += chunk
      // A whole response (by its Content-Length) ends the exchange even on a kept-alive socket.
      const headEnd = data.indexOf("\r\n\r\n")
      const length = headEnd < 0 ? undefined : /\r\ncontent-length: *([0-9]+)/i.exec(data.slice(0, headEnd))?.[1]
      if (length !== undefined && Buffer.byteLength(data.slice(headEnd + 4), "latin1") >= Number(length)) finish()
    })
    socket.on("error", () => undefined)
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const headEnd = data.indexOf("\r\n\r\n")
      const status = Number(/^HTTP\/1\.1 ([0-9]{3})/.exec(data)?.[1] ?? 0)
      resolve({ status, headers: headEnd < 0 ? data : data.slice(0, headEnd), body: headEnd < 0 ? "" : data.slice(headEnd + 4), closed, ms: performance.now() - started })
    }
    const timer = setTimeout(finish, options.waitMs ?? 5_000)
    socket.on("end", () => {
      closed = true
      finish()
    })
    socket.on("close", finish)
    socket.once("connect", async () => {
      for (const part of parts) {
        if (socket.destroyed || closed) break
        const flushed = socket.write(part)
        if (options.drain === true && !flushed) {
          await new Promise<void>((r) => {
            const go = () => {
              socket.off("drain", go)
              socket.off("close", go)
              r()
            }
            socket.on("drain", go)
            socket.on("close", go)
          })
        }
        if (options.gapMs !== undefined) await new Promise((r) => setTimeout(r, options.gapMs))
      }
      if (options.end === true && !socket.destroyed) socket.end()
    })
  })
}

/** The head of a form POST to `path` with extra header lines (each ending in CRLF). */
export function formHead(path: string, extra: string): string {
  return `POST ${path} HTTP/1.1\r\nHost: sim\r\nAccept: application/vnd.pay+json\r\nContent-Type: application/x-www-form-urlencoded\r\n${extra}\r\n`
}

/** One chunk of a chunked body. */
export function chunk(text: string): string {
  return `${Buffer.byteLength(text).toString(16)}\r\n${text}\r\n`
}
