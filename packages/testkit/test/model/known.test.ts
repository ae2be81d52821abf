/**
 * The cases of issue #11, replayed through the model run: each is a sequence the reference model
 * judges step by step (verdicts, views, invariants).
 */
import { describe, expect, it } from "vitest"
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

describe("the model run can fail", () => {
  it("a view whose ledger does not add up is caught, and the failure prints a case to paste", async () => {
    const { useSimulator } = await import("./harness")
    const { createSimulator } = await import("../../src/index")
    const { ModelMismatch } = await import("./runner")
    // A simulator whose /__sim/orders shows one cent more captured than its transactions.
    useSimulator((options) => {
      const sim = createSimulator(options)
      const fetch = sim.fetch
      return Object.assign(Object.create(sim) as typeof sim, {
        fetch: async (request: Request) => {
          const response = await fetch(request)
          if (new URL(request.url).pathname !== "/__sim/orders") return response
          const views = (await response.json()) as Array<Record<string, unknown>>
          const tampered = views.map((v) => (v["kind"] === "preauth" ? { ...v, captured: "0.01" } : v))
          return new Response(JSON.stringify(tampered), { status: 200 })
        },
        close: () => sim.close()
      })
    })
    try {
      const failure = await replay([{ op: "preauth", amount: "100.00", card: "approved" }]).then(() => undefined, (error: unknown) => error)
      expect(failure).toBeInstanceOf(ModelMismatch)
      const message = (failure as Error).message
      expect(message).toContain("captured 0.01")
      expect(message).toContain("await replay(")
      expect(message).toContain(`{ op: "preauth", amount: "100.00", card: "approved" }`)
    } finally {
      useSimulator(createSimulator)
    }
  })
})
