/**
 * The cases of issue #11, replayed through the model run: each is a sequence the reference model
 * judges step by step (verdicts, views, invariants).
 */
import { describe, it } from "vitest"
import { replay } from "./runner"

describe("issue #11 lifecycles, judged by the model", () => {
  it("preauth 100, capture 30 still processing, then a full return", async () => {
    await replay([
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "capture", order: 0, amount: "30.00" },
      { op: "return", order: 0 },
      { op: "advance", ms: 1000 }
    ])
  })

  it("preauth 100, capture 50 still processing, then a void", async () => {
    await replay([
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "capture", order: 0, amount: "50.00" },
      { op: "void", order: 0 },
      { op: "advance", ms: 1000 },
      { op: "return", order: 0 }
    ])
  })

  it("preauth 100, return 30 releases part of the hold; the rest stays capturable and voidable", async () => {
    await replay([
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "return", order: 0, amount: "30.00" },
      { op: "advance", ms: 1000 },
      { op: "capture", order: 0, amount: "20.00" },
      { op: "advance", ms: 1000 },
      { op: "capture", order: 0 }
    ])
  })

  it("preauth 100, release 30, void of the rest (with its amount)", async () => {
    await replay([
      { op: "preauth", amount: "100.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "return", order: 0, amount: "30.00" },
      { op: "advance", ms: 1000 },
      { op: "void", order: 0, amount: "70.00" },
      { op: "advance", ms: 1000 }
    ])
  })

  it("a void with the whole amount of a sale is not partial", async () => {
    await replay([
      { op: "sale", amount: "10.00", card: "approved" },
      { op: "advance", ms: 1000 },
      { op: "void", order: 0, amount: "10.00" },
      { op: "advance", ms: 1000 }
    ])
  })

  it("a sale resent after it was declined answers declined", async () => {
    await replay([
      { op: "sale", amount: "10.00", card: "declined" },
      { op: "advance", ms: 1000 },
      { op: "resend", order: 0 }
    ])
  })
})
