import { beforeEach, describe, expect, it } from "vitest"
import { preparedOperations } from "../../src/operations/table"
import { interruptedUnknown, siblingUnknown, takenOverUnknown } from "../../src/intents/reconcile"
import type { StatusSnapshot } from "../../src/errors"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const capture = preparedOperations.CAPTURE
const values = { client_orderid: "co-1", orderid: "1000007", amount: "4.00", currency: "USD" }
const before = { status: "approved", "paynet-order-id": "1000007" } as unknown as StatusSnapshot

describe("outcomes nothing can prove (reconcile.ts)", () => {
  it("name the order, keep the order as seen before, may have applied, and say what to do", () => {
    const intent = { key: "k-1", before, lastError: "Timeout" }
    const common = { _tag: "OutcomeUnknown", operation: "capture", client_orderid: "co-1", orderid: "1000007", mayHaveApplied: true, idempotencyKey: "k-1" }
    expect(takenOverUnknown(capture, values, "k-1")).toMatchObject({ ...common, lastError: "TakenOver", statusBefore: undefined, next: "another instance sent this call and stopped before its outcome was known: compare status with your own records before sending it again" })
    expect(siblingUnknown(capture, values, intent, "in-flight")).toMatchObject({ ...common, lastError: "Timeout", statusBefore: before, next: "another money call of this client on this order was in flight while this one's outcome was unknown, so the order's figures cannot tell the two apart: compare status (its transactions) with your own records before sending this again" })
    expect(siblingUnknown(capture, values, { key: "k-1" }, "sent-after")).toMatchObject({ ...common, lastError: "unknown", next: "another money call of this client on this order sent after this one's outcome became unknown, so the order's figures cannot tell the two apart: compare status (its transactions) with your own records before sending this again" })
    expect(interruptedUnknown(capture, values, intent)).toMatchObject({ ...common, lastError: "Interrupted", statusBefore: before, next: "call again with the same idempotencyKey: it reconciles before sending" })
  })
})
