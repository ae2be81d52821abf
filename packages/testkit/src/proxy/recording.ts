/**
 * Recordings of the checking proxy (`paykit-sim --proxy URL --record FILE`) and their playback
 * (`paykit-sim --replay FILE`). A recording is JSON Lines: a header line, then one line per
 * exchange, appended as each completes so a stopped proxy loses nothing it answered.
 *
 * What is written of a request: its operation, method, path and form fields with card numbers
 * masked to BIN and last four, CVV and expiry replaced by `***`, and `control` and every `oauth_*` field left
 * out. No header is written (so never `Authorization`), and the proxy holds no key. Replies are
 * written as received, with any card-like run of digits that passes Luhn masked the same way.
 *
 * `node:fs` is loaded only when a recording is written or read, so the package still loads in
 * runtimes without it (workerd).
 *
 * @packageDocumentation
 */
import { maskCardNumber, maskCardRuns } from "./mask"
import type { Mismatch } from "./check"

/** The first line of a recording. */
export const RECORDING_HEADER: {
  /** The format's name, the first line's `format`. */
  readonly format: "paykit-proxy-recording"
  /** The format's version, the first line's `version`. */
  readonly version: 1
} = { format: "paykit-proxy-recording", version: 1 }

/** One recorded exchange. */
export interface RecordedExchange {
  /** Order of the exchange in the session, from 1. */
  readonly seq: number
  /** The operation id (`SALE`, ...) or `-` for a path outside the operation table. */
  readonly operation: string
  /** The HTTP method as requested. */
  readonly method: string
  /** Path and query as requested. */
  readonly path: string
  /** The request's form fields, masked (see the module comment). */
  readonly request: Readonly<Record<string, string>>
  /** The upstream's reply as it was forwarded. */
  readonly reply: {
    /** The HTTP status. */
    readonly status: number
    /** The `Content-Type` header, or `null` when there was none. */
    readonly contentType: string | null
    /** The reply body as text, card-like numbers masked. */
    readonly body: string
  }
  /** What the proxy found different from the spec in this exchange. */
  readonly mismatches: ReadonlyArray<Mismatch>
}

const CARD_FIELD = /card.?n(?:umber|o)|destination-card-no|sending-card-number/i
const CVV_FIELD = /cvv/i
const EXPIRY_FIELD = /expir/i
const LEFT_OUT = /^(?:control|oauth_.*)$/i

/** The form fields of a request body as a recording keeps them (see the module comment). */
export function maskedFields(body: string): Record<string, string> {
  const out: Record<string, string> = {}
  let params: URLSearchParams
  try {
    params = new URLSearchParams(body)
  } catch {
    return out
  }
  for (const [name, value] of params) {
    if (LEFT_OUT.test(name)) continue
    out[name] = CARD_FIELD.test(name) ? maskCardNumber(value) : CVV_FIELD.test(name) || EXPIRY_FIELD.test(name) ? "***" : maskCardRuns(value)
  }
  return out
}

type FileSystem = typeof import("node:fs")

/** Appends exchanges to a recording file (created, or emptied, with its header line). */
export class RecordingWriter {
  private constructor(
    readonly file: string,
    private readonly fs: FileSystem
  ) {}

  /** Creates (or empties) `file` with the header line; only its owner may read it. */
  static async open(file: string): Promise<RecordingWriter> {
    const fs = await import("node:fs")
    fs.writeFileSync(file, `${JSON.stringify(RECORDING_HEADER)}\n`, { mode: 0o600 })
    return new RecordingWriter(file, fs)
  }

  /** Writes one exchange (one line), at once. */
  append(exchange: RecordedExchange): void {
    this.fs.appendFileSync(this.file, `${JSON.stringify(exchange)}\n`)
  }
}

/** Thrown for a file that is not a recording, naming the line and the rule. */
export class RecordingFormatError extends Error {
  /** The error's kind, for `catchTag` and `switch`. */
  readonly _tag = "RecordingFormatError" as const
  constructor(
    /** The recording file. */
    readonly file: string,
    /** The 1-based line at fault. */
    readonly line: number,
    /** What is wrong with it. */
    readonly rule: string
  ) {
    super(`${file}:${line}: ${rule}`)
    this.name = "RecordingFormatError"
  }
}

/** Reads a recording file; rejects with {@link RecordingFormatError} for anything else. */
export async function readRecording(file: string): Promise<Array<RecordedExchange>> {
  const fs = await import("node:fs")
  return parseRecording(fs.readFileSync(file, "utf8"), file)
}

/** Parses a recording's text (`file` names it in errors); throws {@link RecordingFormatError}. */
export function parseRecording(text: string, file = "recording"): Array<RecordedExchange> {
  const lines = text.split("\n").filter((l) => l.trim() !== "")
  const parse = (text: string, line: number): unknown => {
    try {
      return JSON.parse(text)
    } catch {
      throw new RecordingFormatError(file, line, "not JSON")
    }
  }
  const header = parse(lines[0] ?? "", 1) as { format?: unknown; version?: unknown } | null
  if (header?.format !== RECORDING_HEADER.format) throw new RecordingFormatError(file, 1, `format: must be "${RECORDING_HEADER.format}"`)
  if (header.version !== RECORDING_HEADER.version) throw new RecordingFormatError(file, 1, `version: must be ${RECORDING_HEADER.version}`)
  return lines.slice(1).map((text, i) => {
    const x = parse(text, i + 2) as Partial<RecordedExchange> | null
    const reply = x?.reply
    if (typeof x?.method !== "string" || typeof x.path !== "string" || typeof reply?.status !== "number" || typeof reply.body !== "string") {
      throw new RecordingFormatError(file, i + 2, "an exchange needs method, path, reply.status and reply.body")
    }
    return x as RecordedExchange
  })
}

/** The key a replayed request is matched by: method, path and the merchant's order id (as it names it). */
function replayKey(method: string, path: string, fields: Readonly<Record<string, string>>): string {
  const order = fields["client_orderid"] ?? fields["client-order-id"] ?? ""
  return `${method} ${path} ${order} ${fields["orderid"] ?? ""}`
}

/**
 * Serves a recording back: each request gets the next recorded reply with the same method, path,
 * `client_orderid` and `orderid`, in recorded order; once they are used up, the last one again
 * (the gateway answers a repeated request with the order's state).
 */
export class Replay {
  private readonly queues = new Map<string, { readonly replies: Array<RecordedExchange["reply"]>; next: number }>()

  constructor(exchanges: ReadonlyArray<RecordedExchange>) {
    for (const x of exchanges) {
      const key = replayKey(x.method, x.path, x.request)
      let queue = this.queues.get(key)
      if (queue === undefined) this.queues.set(key, (queue = { replies: [], next: 0 }))
      queue.replies.push(x.reply)
    }
  }

  /** The reply recorded for this request, or undefined when none was. */
  take(method: string, path: string, body: string): RecordedExchange["reply"] | undefined {
    const fields = Object.fromEntries(new URLSearchParams(body))
    const queue = this.queues.get(replayKey(method, path, fields))
    if (queue === undefined) return undefined
    const reply = queue.replies[Math.min(queue.next, queue.replies.length - 1)]
    queue.next++
    return reply
  }
}
