/**
 * Fleet probes on a real PostgreSQL server (Debian's package, started here in a temporary
 * directory): a partitioned database, and every scenario of the other fleet-protocol files with
 * each instance on its own pool.
 *
 * The partition: the store connects through a loopback TCP proxy that, once told, stops
 * forwarding in both directions, without a reset and without an answer, as a network partition or
 * a hung server does. A call must still be answered: with the truth once the gateway answered (the
 * customer was charged: a success or `OutcomeUnknown`, never a "nothing happened"), and with
 * nothing charged when the intent could not be recorded. These run on the real clock (the server
 * and the proxy are real I/O) and only check that an answer comes within three times the call's
 * deadline, a hang guard rather than a timing.
 *
 * The scenarios run on the controlled clock, stood still while a query is on its way to the server
 * or back (support.ts, useTestTimeBetweenQueries): the server's speed moves no lease or window.
 */
import { Redacted } from "effect"
import { createServer, Socket, type Server } from "node:net"
import pg from "pg"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { serverForFile } from "../support/postgres-server"
import { createPayClient, type PayStoreHandle } from "../../src/index"
import { endPool } from "../../src/store/sql/end-pool"
import { openPostgresStore } from "../../src/store/postgres"
import { newSim, settled } from "../support/attacks"
import { saleInput } from "../support/fixtures"
import { clientOptions } from "../support/sim"
import { conflictReplays } from "./conflict-replays.scenarios"
import { forgottenOrder } from "./forgotten-order.scenarios"
import { leaseCoversDeadline } from "./lease-covers-deadline.scenarios"
import { orderLease } from "./order-lease.scenarios"
import { resumedKey } from "./resumed-key.scenarios"
import { handlesOn, opOf, runScenarios, told, useTestTimeBetweenQueries, verdict, Wire, type StoreKind } from "./support"
import { windowFromSend } from "./window-from-send.scenarios"

// One server for the whole file, started before the suite's own beforeAll asks for it.
const requireServer = serverForFile()

// ---------------------------------------------------------------------------------------------
// A partition between the store and the server

/** A loopback TCP proxy in front of the server that can stop forwarding (no reset, no answer). */
class PartitionProxy {
  private readonly sockets = new Set<Socket>()
  private partitioned = false
  private constructor(private readonly server: Server, readonly port: number) {}

  static async start(targetPort: number): Promise<PartitionProxy> {
    let proxy!: PartitionProxy
    const server = createServer((client) => {
      proxy.sockets.add(client)
      client.on("close", () => proxy.sockets.delete(client))
      client.on("error", () => undefined)
      // A connection made during the partition gets nothing: not even the upstream connection.
      if (proxy.partitioned) return
      const upstream = new Socket()
      proxy.sockets.add(upstream)
      upstream.on("close", () => proxy.sockets.delete(upstream))
      upstream.on("error", () => client.destroy())
      client.on("error", () => upstream.destroy())
      upstream.connect(targetPort, "127.0.0.1")
      client.on("data", (chunk) => {
        if (!proxy.partitioned) upstream.write(chunk)
      })
      upstream.on("data", (chunk) => {
        if (!proxy.partitioned) client.write(chunk)
      })
      client.on("end", () => upstream.end())
      upstream.on("end", () => client.end())
    })
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => resolve())
    })
    const address = server.address()
    proxy = new PartitionProxy(server, typeof address === "object" && address !== null ? address.port : 0)
    return proxy
  }

  /** From now on nothing passes, either way, on any connection, old or new. */
  partition(): void {
    this.partitioned = true
  }

  /** Drops every connection and stops listening. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

const DEADLINE_MS = 1500
/** The hang guard: a caller still unanswered after three deadlines is hung. */
const ANSWER_WITHIN_MS = DEADLINE_MS * 3

/** Resolves with "no answer" after `ms` of real time (the guard's timer is cleared once the call ends). */
function withinGuard<T>(call: Promise<T>, ms: number): Promise<T | "no answer"> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const guard = new Promise<"no answer">((resolve) => {
    timer = setTimeout(() => resolve("no answer"), ms)
  })
  return Promise.race([call, guard]).finally(() => clearTimeout(timer))
}

describe("a partitioned database: every call is answered, and truthfully", () => {
  let proxy: PartitionProxy
  let store: PayStoreHandle
  beforeAll(async () => {
    await requireServer()
  }, 120_000)
  afterEach(async () => {
    // Dropping the proxy's connections ends whatever still waits on the database.
    await proxy?.close()
    await withinGuard(store?.close() ?? Promise.resolve(), 10_000)
  }, 30_000)

  async function openThroughProxy(instanceId: string): Promise<PayStoreHandle> {
    const { url, port } = await requireServer()
    proxy = await PartitionProxy.start(port)
    store = await openPostgresStore({ connectionString: Redacted.make(url.replace(`:${port}/`, `:${proxy.port}/`)), poolMax: 4, instanceId })
    return store
  }

  it(`the partition starts while the sale is at the gateway: the caller is answered within ${ANSWER_WITHIN_MS} ms with the truth (the customer was charged)`, async () => {
    const sim = newSim()
    const wire = new Wire(sim)
    try {
      const s = await openThroughProxy("partition-after")
      const link = wire.link("A")
      // The intent is recorded; the partition starts as the sale leaves, so the gateway charges the
      // customer while the outcome cannot be written.
      const pay = createPayClient(clientOptions(sim, {
        store: s,
        fetch: (req) => {
          if (opOf(req) === "sale") proxy.partition()
          return link.fetch(req)
        },
        deadlineMs: DEADLINE_MS,
        timeoutMs: 1000,
        intentLeaseMs: DEADLINE_MS * 2,
        reconcile: { settleMs: 500, pollIntervalMs: 50 }
      }))
      const input = saleInput()
      const answer = await withinGuard(wire.answer("A", settled(pay.sale(input, { idempotencyKey: `partition-after-${input.client_orderid}` }))), ANSWER_WITHIN_MS)
      await wire.settle()
      const charged = `${wire.approved(input.client_orderid, "sale").length} approved sale`
      const answered = answer === "no answer" ? `no answer after ${ANSWER_WITHIN_MS} ms` : "answered"
      expect(verdict(`${charged}, ${answered}`, wire.judge("sale"))).toBe(verdict("1 approved sale, answered"))
    } finally {
      await sim.close()
    }
  }, 60_000)

  it(`the partition is in place before the call (recording the intent gets no answer): the caller is answered within ${ANSWER_WITHIN_MS} ms and nothing is charged`, async () => {
    const sim = newSim()
    const wire = new Wire(sim)
    try {
      const s = await openThroughProxy("partition-before")
      proxy.partition()
      const pay = createPayClient(clientOptions(sim, {
        store: s,
        fetch: wire.link("A").fetch,
        deadlineMs: DEADLINE_MS,
        timeoutMs: 1000,
        intentLeaseMs: DEADLINE_MS * 2,
        reconcile: { settleMs: 500, pollIntervalMs: 50 }
      }))
      const input = saleInput()
      const answer = await withinGuard(wire.answer("A", settled(pay.sale(input, { idempotencyKey: `partition-before-${input.client_orderid}` }))), ANSWER_WITHIN_MS)
      await wire.settle()
      const charged = `${wire.approved(input.client_orderid, "sale").length} approved sales`
      const answered = answer === "no answer" ? `no answer after ${ANSWER_WITHIN_MS} ms` : answer.ok ? told(answer) : "answered with a failure"
      expect(verdict(`${charged}, ${answered}`, wire.judge("sale"))).toBe(verdict("0 approved sales, answered with a failure"))
    } finally {
      await sim.close()
    }
  }, 60_000)
})

// ---------------------------------------------------------------------------------------------
// The scenarios, each instance on its own pool

/** Queries on their way to the server or back, over every pool of the scenarios. */
const io = { pending: 0 }

/**
 * A pool whose connections count their queries and connects in {@link io}, so the controlled clock
 * stands still while the server works.
 */
function countedPool(connectionString: string): pg.Pool {
  const Counted = class extends pg.Client {}
  const query = pg.Client.prototype.query as (...args: Array<unknown>) => unknown
  const connect = pg.Client.prototype.connect as (...args: Array<unknown>) => unknown
  const counted = (original: (...args: Array<unknown>) => unknown) =>
    function(this: pg.Client, ...args: Array<unknown>): unknown {
      io.pending++
      let ended = false
      const end = () => {
        if (!ended) {
          ended = true
          io.pending--
        }
      }
      const last = args[args.length - 1]
      if (typeof last === "function") {
        args[args.length - 1] = (...results: Array<unknown>) => {
          end()
          return (last as (...r: Array<unknown>) => unknown)(...results)
        }
      }
      try {
        const result = original.apply(this, args)
        if (typeof last !== "function") {
          if (result instanceof Promise) result.then(end, end)
          else end()
        }
        return result
      } catch (error) {
        end()
        throw error
      }
    }
  ;(Counted.prototype as unknown as Record<string, unknown>)["query"] = counted(query)
  ;(Counted.prototype as unknown as Record<string, unknown>)["connect"] = counted(connect)
  // No idle timeout: its timer would be the next one the controlled clock moves to whenever the
  // pool sits idle, jumping 10 s while work the pool does not see (WebCrypto hashing) is pending.
  const pool = new pg.Pool({ connectionString, max: 4, connectionTimeoutMillis: 10_000, idleTimeoutMillis: 0, Client: Counted })
  // An idle connection the server drops emits `error` on the pool; the next query reports any lasting trouble.
  pool.on("error", () => undefined)
  return pool
}

let databases = 0
/** PostgreSQL as a store kind: a fresh database per scenario group, a pool per instance. */
const postgres: StoreKind = ["postgres", async () => {
  const { url } = await requireServer()
  const name = `fleet_probes_${databases++}`
  const admin = new pg.Pool({ connectionString: url, max: 1 })
  await admin.query(`DROP DATABASE IF EXISTS ${name}`)
  await admin.query(`CREATE DATABASE ${name}`)
  const dbUrl = url.replace(/\/postgres$/, `/${name}`)
  const pools: Array<pg.Pool> = []
  return handlesOn(
    (instanceId) => {
      const pool = countedPool(dbUrl)
      pools.push(pool)
      return openPostgresStore({ pool, instanceId })
    },
    async () => {
      for (const p of pools) await p.end()
      await admin.query(`DROP DATABASE IF EXISTS ${name}`)
      await endPool(admin)
    }
  )
}]

describe("the fleet scenarios on PostgreSQL", () => {
  useTestTimeBetweenQueries(() => io.pending > 0)
  runScenarios("a resumed key goes through the shared store", resumedKey, [postgres])
  runScenarios("the processing window runs from the last send", windowFromSend, [postgres])
  runScenarios("a conflict after a send is final", conflictReplays, [postgres])
  runScenarios("order-not-found on an old intent", forgottenOrder, [postgres])
  runScenarios("a call's lease covers its deadline", leaseCoversDeadline, [postgres])
  runScenarios("calls on one order across instances take turns", orderLease, [postgres])
})
