import { describe, expect, it } from "vitest"
import { runVectors } from "../scripts/vectors"
import { tamperedCopy } from "./tampered-vectors"
import { VECTORS_DIR } from "./vectors"

describe("vector runner", () => {
  it("passes every case of the bundled vectors", async () => {
    const report = await runVectors(VECTORS_DIR)
    expect(report.failures).toEqual([])
    expect(report.passed).toBeGreaterThan(100)
  })

  it("reports each corrupted case by id", async () => {
    const dir = tamperedCopy(({ control, oauth, callback }) => {
      control.cases[0].control = "0".repeat(40)
      const byId = (id: string) => control.cases.find((c: { id: string }) => c.id === id)
      byId("invalid-01-capture").values.amount = "1.00"
      // A case signed in the other mode, or with no mode, must fail rather than be guessed.
      byId("c4-return-jpy").minor_units = "cents"
      delete byId("c5-make-rebill-tnd-cents").minor_units
      byId("c6-sale-vnd").minor_units = "ISO4217"
      oauth.cases[0].signature = "AAAA"
      oauth.cases.find((c: { id: string }) => c.id === "rsa4096-payout").base_string_uri = "https://x/"
      oauth.base_string_examples[0].base_string += "x"
      callback.cases[1].values.status = "approved!"
    })
    const report = await runVectors(dir)
    expect(report.failures.map((f) => f.id)).toEqual([
      "c1-tds-cres-basic",
      "c4-return-jpy",
      "c5-make-rebill-tnd-cents",
      "c6-sale-vnd",
      "invalid-01-capture",
      "hmac-payout",
      "rsa4096-payout",
      "rfc5849-3.4.1.1-example",
      "callback-01"
    ])
    expect(report.failed).toBe(9)
    expect(report.failures.find((f) => f.id === "c5-make-rebill-tnd-cents")?.message).toBe("no minor_units on an amount case")
  })
})
