import { operationSchemas, operations, type OperationId } from "@paykit/contracts"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileFastCheck } from "../src/validate"
import { saleInput } from "./support/fixtures"

const withoutControl = (id: OperationId) => {
  const fields = { ...(operationSchemas[id].request as unknown as Schema.Struct<Schema.Struct.Fields>).fields }
  delete fields["control"]
  return Schema.Struct(fields)
}

describe("fast input check", () => {
  it("compiles for every operation's request Schema", () => {
    for (const id of Object.keys(operations) as Array<OperationId>) {
      expect(compileFastCheck(withoutControl(id).ast), id).toBeDefined()
    }
  })

  it("never accepts what the Schema refuses (mutated sale inputs)", () => {
    const schema = withoutControl("SALE")
    const fast = compileFastCheck(schema.ast)!
    const decode = Schema.decodeUnknownEither(schema as unknown as Schema.Schema<unknown>, { onExcessProperty: "error" })
    const base = saleInput()
    const keys = [...Object.keys(base), "state", "ssn", "site_url", "bogus"]
    const value = fc.oneof(fc.string({ maxLength: 30 }), fc.stringMatching(/^[0-9]{0,20}$/), fc.constantFrom("12", "13", "USD", "usd", "10.00", "1e3", "https://x", ""), fc.integer(), fc.constant(undefined))
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...keys), value), { maxLength: 4 }), fc.boolean(), (edits, drop) => {
        const input: Record<string, unknown> = { ...base }
        for (const [k, v] of edits) {
          if (drop && v === undefined) delete input[k]
          else input[k] = v
        }
        const fastOk = fast(input)
        const schemaOk = Either.isRight(decode(input))
        if (fastOk) expect(schemaOk).toBe(true)
        // On valid inputs the fast path must not fall back needlessly.
        if (schemaOk && Object.values(input).every((v) => v !== undefined)) expect(fastOk).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })
})
