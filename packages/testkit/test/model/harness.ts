/**
 * The simulator as the model run sees it: only its HTTP interface (`sim.fetch`, the same handler
 * `listen()` serves), requests signed with @paykit/signing for the test merchant (endpoint 1001),
 * the test routes for time (`POST /__sim/clock/advance?ms=N`), state (`GET /__sim/orders`) and
 * restarts (`POST /__sim/snapshot`, then a new simulator from it).
 */
import type { Scheduler } from "fast-check"
import { signControl } from "@paykit/signing"
import type { OperationId } from "@paykit/contracts"
import { createSimulator, testMerchant, type Simulator, type SimulatorSnapshot } from "../../src/index"
import type { LedgerView } from "./invariants"

const ORIGIN = "http://sim.model"
const PATHS: Partial<Record<OperationId, string>> = {
  SALE: "/api/v2/sale/",
  PREAUTH: "/api/v2/preauth/",
  CAPTURE: "/api/v2/capture/",
  VOID: "/api/v2/void/",
  RETURN: "/api/v2/return/",
  STATUS: "/api/v2/status/"
}

export interface HarnessConfig {
  readonly processingDelayMs: number
  readonly settlementDelayMs: number
  /** Epoch ms the virtual clock starts at. */
  readonly startTime: number
}

/** A reply: HTTP status and parsed JSON body. */
export interface WireReply {
  readonly http: number
  readonly body: Record<string, unknown>
}

/** An order view as `GET /__sim/orders` shows it. */
export type OrderJson = LedgerView & { readonly settled?: boolean; readonly transactions: ReadonlyArray<{ type: string; status: string; amount?: string; at: number }> }

/** A Request whose body arrives when the scheduler lets it: the scheduler interleaves two requests inside the simulator. */
class ScheduledRequest extends Request {
  constructor(url: string, init: RequestInit, private readonly scheduler: Scheduler, private readonly label: string) {
    super(url, init)
  }

  override text(): Promise<string> {
    return this.scheduler.schedule(super.text(), `${this.label}: body arrives`)
  }
}

type CreateSimulator = typeof createSimulator

let factory: CreateSimulator = createSimulator

/**
 * Drives another build of the simulator (e.g. an older commit's sources, to show what the model
 * finds there); every harness created afterwards uses it.
 */
export function useSimulator(create: CreateSimulator): void {
  factory = create
}

export class Harness {
  sim: Simulator
  restarts = 0

  constructor(readonly config: HarnessConfig) {
    this.sim = factory({ processingDelayMs: config.processingDelayMs, settlementDelayMs: config.settlementDelayMs, startTime: config.startTime, clock: "virtual" })
  }

  /** Sends a control-signed operation; with a scheduler, its start and its body are scheduling points. */
  async send(operationId: OperationId, fields: Record<string, string>, scheduler?: Scheduler, label: string = operationId): Promise<WireReply> {
    const path = PATHS[operationId]
    if (path === undefined) throw new Error(`harness: ${operationId} is not driven by the model`)
    const endpointId = testMerchant.endpointId
    const body = { ...fields, control: signControl(operationId, fields, { key: testMerchant.controlKey, endpointId }) }
    const init: RequestInit = {
      method: "POST",
      headers: { accept: "application/vnd.pay+json", "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(body).toString()
    }
    const url = `${ORIGIN}${path}${endpointId}`
    if (scheduler !== undefined) await scheduler.schedule(Promise.resolve(), `${label}: sent`)
    const request = scheduler === undefined ? new Request(url, init) : new ScheduledRequest(url, init, scheduler, label)
    return read(await this.sim.fetch(request))
  }

  /** `POST /__sim/clock/advance?ms=N`. */
  async advance(ms: number, scheduler?: Scheduler, label = "advance"): Promise<WireReply> {
    if (scheduler !== undefined) await scheduler.schedule(Promise.resolve(), `${label}: sent`)
    return read(await this.sim.fetch(new Request(`${ORIGIN}/__sim/clock/advance?ms=${ms}`, { method: "POST" })))
  }

  /** `GET /__sim/orders`: every order, oldest first. */
  async orders(): Promise<OrderJson[]> {
    const reply = await this.sim.fetch(new Request(`${ORIGIN}/__sim/orders`))
    if (reply.status !== 200) throw new Error(`GET /__sim/orders answered ${reply.status}`)
    return (await reply.json()) as OrderJson[]
  }

  /** `GET /__sim/invariants`: what the simulator's own checker recorded ([] when its money adds up; undefined when it has no such route). */
  async ownInvariants(): Promise<unknown[] | undefined> {
    const reply = await this.sim.fetch(new Request(`${ORIGIN}/__sim/invariants`))
    if (reply.status === 404) return undefined
    if (reply.status !== 200) throw new Error(`GET /__sim/invariants answered ${reply.status}`)
    return (await reply.json()) as unknown[]
  }

  /** A restart: `POST /__sim/snapshot`, close, and a new simulator from the snapshot's JSON. */
  async restart(): Promise<void> {
    const reply = await this.sim.fetch(new Request(`${ORIGIN}/__sim/snapshot`, { method: "POST" }))
    if (reply.status !== 200) throw new Error(`POST /__sim/snapshot answered ${reply.status}`)
    const snapshot = JSON.parse(await reply.text()) as SimulatorSnapshot
    await this.sim.close()
    this.sim = factory({ processingDelayMs: this.config.processingDelayMs, settlementDelayMs: this.config.settlementDelayMs, clock: "virtual", restore: snapshot })
    this.restarts++
  }

  close(): Promise<void> {
    return this.sim.close()
  }
}

async function read(response: Response): Promise<WireReply> {
  const text = await response.text()
  let body: Record<string, unknown>
  try {
    body = JSON.parse(text) as Record<string, unknown>
  } catch {
    body = { unparsable: text.slice(0, 200) }
  }
  return { http: response.status, body }
}
