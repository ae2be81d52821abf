/**
 * Minimal sequences the model found, pasted as printed (titles shortened). The first five failed
 * on the simulator before the ledger (commit fc5c102); the last on a working-tree simulator whose
 * void rule had lost "refused while a capture or return is in flight".
 */
import { it } from "vitest"
import { replay } from "./runner"

it("model: a resend answers the order's current state (was: the first reply, processing)", async () => {
  await replay(
    [
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "resend", order: 0 }
    ]
  )
})

it("model: a void with the whole amount of a preauth is accepted (was: void-partial-not-allowed)", async () => {
  await replay(
    [
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1001 },
      { op: "void", order: 0, amount: "100.00" }
    ]
  )
})

it("model: a partial hold release leaves the rest capturable (was: capture-not-allowed)", async () => {
  await replay(
    [
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "return", order: 0, amount: "0.10" },
      { op: "capture", order: 0, amount: "0.09" }
    ]
  )
})

it("model: a released hold is not a refund in status (was: returned-amount 100.00)", async () => {
  await replay(
    [
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "return", order: 0, amount: "100.00" },
      { op: "advance", ms: 1001 },
      { op: "capture", order: 0, amount: "0.10" }
    ]
  )
})

it("model: no void while a capture is in flight (was: accepted, both approved)", async () => {
  await replay(
    [
      { op: "preauth", amount: "0.01", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "capture", order: 0, amount: "0.01" },
      { op: "pair", a: { op: "void", order: 0 }, b: { op: "void", order: 0 }, order: [1, 3, 2, 4] }
    ]
  )
})

it("model: a void beside a capture finishing inside a clock advance (was: 500 internal-error)", async () => {
  await replay(
    [
      { op: "preauth", amount: "0.02", card: "approved" },
      { op: "pair", a: { op: "capture", order: 0, amount: "0.01" }, b: { op: "advance", ms: 1000 }, order: [2, 1, 3] },
      { op: "void", order: 0 }
    ]
  )
})
