/**
 * The gateway as the model's clients reach it: the in-process simulator behind a network that can
 * hold a request, drop it, lose its reply after processing, answer 500 before or after processing,
 * and a `status` that is down for a while. Every request passes through here, so here the book
 * learns which key sent what and which transaction each send made.
 *
 * The one rule the network keeps, because without it no client could ever prove a send did not
 * land: a request is processed within the processing window of its send (`windowMs`, the client's
 * `settleMs`) or never (docs/fleet.md: the window is how long the gateway may still hold a request).
 *
 * @packageDocumentation
 */
import type { Simulator } from "@paykit/testkit"
import type { FetchLike } from "../../src/index"
import type { Book, Send } from "./book"

/** Which requests a fault rule hits. */
export type FaultTarget = "sale" | "money" | "status"

/** What a fault rule does to the requests it hits. */
export type FaultKind =
  /** Processed `ms` after it arrived (less than the window); the reply reaches a caller still waiting. */
  | "hold"
  /** Never processed, never answered: the caller times out. */
  | "drop"
  /** Processed now; the reply is lost (connection reset). */
  | "lose"
  /** Not processed: 500. */
  | "fail500"
  /** Processed now, answered 500. */
  | "fail500after"

/**
 * A fault rule: the next `count` requests of `target` get `kind`; with `downMs`, `status` is down
 * from that moment for that long too (a partition right after the send: the reply and the means to
 * ask what became of it are lost together).
 */
export interface FaultRule {
  readonly target: FaultTarget
  readonly kind: FaultKind
  /** Only requests of this idempotency key (a call's own fault: its key's next send). */
  readonly key?: string | undefined
  count: number
  readonly ms?: number | undefined
  readonly downMs?: number | undefined
}

const SALE_OPS = new Set(["sale", "preauth"])
const MONEY_OPS = new Set(["capture", "return", "void"])

/** The operation a request is for: the path segment before the endpoint id. */
export const operationOf = (url: string): string => {
  const parts = new URL(url).pathname.split("/").filter((p) => p !== "" && p !== "group")
  return parts[parts.length - 2] ?? ""
}

const targetOf = (op: string): FaultTarget | undefined =>
  SALE_OPS.has(op) ? "sale" : MONEY_OPS.has(op) ? "money" : op === "status" ? "status" : undefined

const reset = (): TypeError => new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) })
const serverError = (): Response =>
  new Response(JSON.stringify({ type: "error", "serial-number": "00000000-0000-4000-8000-000000000000", "error-message": "model: gateway failure", "error-code": "internal-error" }), {
    status: 500,
    headers: { "content-type": "application/vnd.pay+json" }
  })

// What a status reply says, in short, for the log.
async function summary(response: Response): Promise<string> {
  const body = (await response.clone().json().catch(() => ({}))) as Record<string, unknown>
  const figures = ["status", "transaction-type", "amount", "captured-amount", "returned-amount", "hold-released-amount"]
  return figures.filter((f) => body[f] !== undefined).map((f) => `${f}=${String(body[f])}`).join(" ")
}

/** Maps a request's form fields to the idempotency key that sent it (the model's own convention). */
export type KeyOf = (operation: string, fields: URLSearchParams) => string | undefined

/** The network and the gateway of one sequence. */
export class Gateway {
  readonly rules: Array<FaultRule> = []
  statusDownUntil = 0
  /** Requests held, waiting for their time. */
  private held = 0

  constructor(
    readonly sim: Simulator,
    readonly book: Book,
    readonly windowMs: number,
    private readonly keyOf: KeyOf,
    /** Settles when the sequence's world is closed: a dead instance's fetch fails then. */
    private readonly burial: Promise<void>
  ) {}

  /** Whether requests are still held at the gateway. */
  get holding(): number {
    return this.held
  }

  addRule(rule: FaultRule): void {
    this.rules.push(rule)
  }

  clearFaults(): void {
    this.rules.length = 0
    this.statusDownUntil = 0
  }

  /** Every order the simulator holds, into the book (before a request may make it forget some). */
  async refresh(): Promise<void> {
    // The simulator's clock follows the model's (its retention by age reads it), and what fell due
    // runs (a capture turns approved) before the next request's own prune can forget it.
    await this.sim.clock.advance(Math.max(0, Date.now() - this.sim.clock.now()))
    for (const o of this.sim.orders()) this.book.orders.set(o.orderid, o)
  }

  private take(target: FaultTarget, key: string | undefined): FaultRule | undefined {
    for (const rule of this.rules) {
      if (rule.target !== target || rule.count <= 0 || (rule.key !== undefined && rule.key !== key)) continue
      rule.count--
      return rule
    }
    return undefined
  }

  /**
   * The fetch of one client instance. `dead()` says the instance was killed: from then on nothing
   * it sends leaves, and nothing reaches it. `faulty: false` is a path the network's faults do not
   * touch (the back office works at the gateway itself).
   */
  fetchFor(instance: string, dead: () => boolean, faulty = true): FetchLike {
    return (request, init) => {
      // Nothing leaves a dead instance, and it hears nothing until the world is closed; then its
      // fetch fails, so its fibers end instead of living on for the rest of the run.
      if (dead()) return this.burial.then(() => Promise.reject(reset()))
      const signal = init?.signal
      if (signal?.aborted === true) return Promise.reject(signal.reason)
      return new Promise<Response>((resolve, reject) => {
        let open = true
        const onAbort = () => {
          if (!open) return
          open = false
          reject(signal!.reason)
        }
        signal?.addEventListener("abort", onAbort, { once: true })
        this.arrive(request, instance, faulty).then(
          (response) => {
            // Silence: the caller waits until it gives up (its abort still ends the fetch).
            if (!open || dead() || response === "silence") return
            signal?.removeEventListener("abort", onAbort)
            open = false
            if (response instanceof Error) reject(response)
            else resolve(response)
          },
          (error: unknown) => {
            if (!open || dead()) return
            open = false
            reject(error)
          }
        )
      })
    }
  }

  /** A request arrives at the gateway: what becomes of it, and what its sender hears. */
  private async arrive(request: Request, instance: string, faulty: boolean): Promise<Response | Error | "silence"> {
    const op = operationOf(request.url)
    const target = targetOf(op)
    const text = await request.clone().text()
    const fields = new URLSearchParams(text)
    const key = target === "status" || target === undefined ? undefined : this.keyOf(op, fields)
    const send = key === undefined ? undefined : this.book.send(key, instance, op)
    if (process.env["MODEL_DEBUG"]) this.book.note(`arrive ${op} from ${instance}`)
    if (target === "status" && faulty && Date.now() < this.statusDownUntil) {
      this.book.note(`status by ${instance}: 503 (down)`)
      return new Response("", { status: 503 })
    }
    const rule = target === undefined || !faulty ? undefined : this.take(target, key)
    if (rule !== undefined) {
      this.book.note(`fault ${rule.kind}${rule.kind !== "hold" || rule.ms === undefined ? "" : ` ${rule.ms}ms`}${rule.downMs === undefined ? "" : `, status down ${rule.downMs}ms`} on ${op}${key === undefined ? "" : ` key=${key}`}`)
      if (rule.downMs !== undefined) this.statusDownUntil = Math.max(this.statusDownUntil, Date.now() + rule.downMs)
    }
    switch (rule?.kind) {
      case undefined: {
        const response = await this.process(request, send)
        if (target === "status") this.book.note(`status by ${instance}: ${response instanceof Error ? "reset" : response.status}${response instanceof Response && response.status === 200 ? ` ${await summary(response)}` : ""}`)
        return response
      }
      case "hold": {
        this.held++
        const ms = Math.min(rule.ms ?? 100, this.windowMs - 1)
        await new Promise<void>((resolve) => setTimeout(resolve, ms))
        this.held--
        return this.process(request, send)
      }
      case "drop":
        return "silence"
      case "lose":
        await this.process(request, send)
        return reset()
      case "fail500":
        return serverError()
      case "fail500after":
        await this.process(request, send)
        return serverError()
    }
  }

  /** The simulator handles the request; a new transaction is attributed to `send`. */
  private async process(request: Request, send: Send | undefined): Promise<Response | Error> {
    await this.refresh()
    let response: Response
    try {
      response = await this.sim.fetch(request)
    } catch (error) {
      return error as Error
    }
    if (send !== undefined && response.status === 200) {
      const body = (await response.clone().json().catch(() => undefined)) as Record<string, unknown> | undefined
      const serial = body?.["serial-number"]
      const orderid = body?.["paynet-order-id"]
      if (typeof serial === "string" && typeof orderid === "string") {
        const order = this.sim.order(orderid)
        if (order !== undefined) this.book.orders.set(orderid, order)
        const made = order?.transactions.some((t) => t.serialNumber === serial) === true
        if (made && !this.book.bySerial.has(serial)) {
          send.serial = serial
          send.orderid = orderid
          this.book.bySerial.set(serial, { send, orderid, serial })
          this.book.note(`landed ${send.operation} key=${send.key} order=${orderid}`)
        }
      }
    }
    return response
  }
}
