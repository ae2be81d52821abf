/**
 * `proveTransaction` on its own, with a scripted `by-request-sn` lookup: the rules a sim run cannot
 * easily time (a call still running when its callback arrives, a transaction still processing).
 */
import { Effect } from "effect"
import { beforeEach, describe, expect, it } from "vitest"
import type { Callback } from "../../src/callbacks/verify"
import { proveTransaction, type ClaimOnce, type TransactionLookup } from "../../src/callbacks/transactions"
import { memoryCallbackStore } from "../../src/callbacks/handler"
import type { StatusReply } from "../../src/operations/table"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const cb = (claims: Record<string, string>): Callback => ({
  status: "approved",
  orderid: "700",
  client_orderid: "c-700",
  claims: { type: "reversal", amount: "5.00", ...claims },
  raw: new URLSearchParams(claims).toString()
})
const order = (extra: Record<string, string> = {}) =>
  ({ status: "approved", "paynet-order-id": "700", amount: "10.00", currency: "USD", "transaction-type": "return", "returned-amount": "5.00", ...extra }) as unknown as StatusReply

function claims(): ClaimOnce {
  const store = memoryCallbackStore()
  return (key) => Effect.promise(async () => store.claim(key, 60_000))
}

const transactions = (byserial: Record<string, Record<string, string>>): TransactionLookup => (q) =>
  Effect.succeed({ "paynet-order-id": "700", currency: "USD", ...byserial[q["by-request-sn"]] } as unknown as StatusReply)

describe("proveTransaction", () => {
  it("a call of this client still running blocks the proof from totals (it may yet name its transaction)", async () => {
    const claim = claims()
    const running = await Effect.runPromise(proveTransaction(cb({}), "return", order(), [{ operation: "RETURN", serialNumber: undefined, running: true }], transactions({}), claim))
    expect(running).toEqual({ _tag: "NotProven", reason: "unconfirmed", detail: "call-running" })
    const ended = await Effect.runPromise(proveTransaction(cb({}), "return", order(), [{ operation: "RETURN", serialNumber: undefined, running: false }], transactions({}), claim))
    expect(ended).toMatchObject({ _tag: "Proven", serialNumber: undefined })
  })

  it("a transaction still processing is unconfirmed; one of another type, status or approval code does not match", async () => {
    const calls = [{ operation: "RETURN", serialNumber: "s1", running: false }]
    const prove = (tx: Record<string, string>, claimed: Record<string, string> = {}) =>
      Effect.runPromise(proveTransaction(cb(claimed), "return", order({ "approval-code": "999", "returned-amount": "10.00" }), calls, transactions({ s1: tx }), claims()))
    expect(await prove({ status: "processing", "transaction-type": "return", amount: "5.00" })).toMatchObject({ reason: "unconfirmed", detail: "transaction-processing" })
    expect(await prove({ status: "approved", "transaction-type": "capture", amount: "5.00", "approval-code": "1" })).toMatchObject({ _tag: "NotProven" })
    expect(await prove({ status: "declined", "transaction-type": "return", amount: "5.00" })).toMatchObject({ _tag: "NotProven" })
    expect(await prove({ status: "approved", "transaction-type": "return", amount: "5.00", "approval-code": "1", "processor-rrn": "r1" }, { "approval-code": "2" })).toMatchObject({ _tag: "NotProven" })
    // An approved transaction that shows no approval code cannot vouch for a callback that names one.
    expect(await prove({ status: "approved", "transaction-type": "return", amount: "5.00" }, { "approval-code": "1" })).toMatchObject({ _tag: "NotProven" })
    expect(await prove({ status: "approved", "transaction-type": "return", amount: "5.00", "approval-code": "1", "processor-rrn": "r1" }, { "approval-code": "1", "processor-rrn": "r1" }))
      .toMatchObject({ _tag: "Proven", serialNumber: "s1" })
  })

  it("a transaction another delivery is proving right now answers running-elsewhere; a failing lookup status-failed", async () => {
    const calls = [{ operation: "RETURN", serialNumber: "s1", running: false }]
    const tx = { s1: { status: "approved", "transaction-type": "return", amount: "5.00" } }
    const claim = claims()
    expect(await Effect.runPromise(proveTransaction(cb({}), "return", order(), calls, transactions(tx), claim))).toMatchObject({ _tag: "Proven" })
    expect(await Effect.runPromise(proveTransaction(cb({ descriptor: "x" }), "return", order(), calls, transactions(tx), claim)))
      .toEqual({ _tag: "NotProven", reason: "running-elsewhere", detail: "transaction-claimed-elsewhere" })
    const failing: TransactionLookup = () => Effect.fail({ _tag: "Timeout" } as never)
    expect(await Effect.runPromise(proveTransaction(cb({}), "return", order(), calls, failing, claims()))).toMatchObject({ reason: "status-failed" })
  })
})
