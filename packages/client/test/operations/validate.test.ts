import { operationSchemas, operations, type OperationId } from "@paykit/contracts"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileFastCheck, compileFastDecode } from "../../src/operations/validate"
import { saleInput } from "../support/fixtures"

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

describe("fast reply decode", () => {
  const responseOf = (id: OperationId) => operationSchemas[id].response as unknown as Schema.Schema<Record<string, unknown>>

  it("compiles for every operation's reply Schema", () => {
    for (const id of Object.keys(operations) as Array<OperationId>) {
      expect(compileFastDecode(responseOf(id).ast), id).toBeDefined()
    }
  })

  it("gives exactly what the Schema decoder gives, or defers to it (mutated async and status replies)", () => {
    const base: Record<OperationId, Record<string, unknown>> = {} as never
    const asyncReply = { type: "async-response", status: "processing", "serial-number": "sn-1", "merchant-order-id": "c-1", "paynet-order-id": 123, "end-point-id": "7" }
    const statusReply = { type: "status-response", status: "approved", "serial-number": "sn-2", "merchant-order-id": "c-1", "paynet-order-id": "123", amount: "10.00", currency: "USD", html: "<form/>" }
    for (const id of ["SALE", "STATUS", "CAPTURE", "PAYOUT"] as Array<OperationId>) base[id] = id === "STATUS" ? statusReply : asyncReply
    const value = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom("approved", "processing", "nope", "", "10.00", "USD"), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant({}))
    fc.assert(
      fc.property(fc.constantFrom(...(Object.keys(base) as Array<OperationId>)), fc.array(fc.tuple(fc.constantFrom("type", "status", "serial-number", "merchant-order-id", "paynet-order-id", "end-point-id", "amount", "error-code", "extra"), value), { maxLength: 3 }), fc.boolean(), (id, edits, drop) => {
        const schema = responseOf(id)
        const fast = compileFastDecode(schema.ast)!
        const full = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })
        const input: Record<string, unknown> = { ...base[id] }
        for (const [k, v] of edits) {
          if (drop && v === undefined) delete input[k]
          else input[k] = v
        }
        const fastOut = fast(input)
        const schemaOut = full(input)
        if (fastOut !== undefined) {
          expect(Either.isRight(schemaOut)).toBe(true)
          // same fields, same values, same order
          expect(Object.entries(fastOut)).toEqual(Object.entries(Either.getOrThrow(schemaOut)))
        } else if (Either.isRight(schemaOut) && Object.values(input).every((v) => v !== undefined)) {
          // on valid replies the fast path must not fall back needlessly
          expect.unreachable(`fast decode deferred on a valid ${id} reply`)
        }
      }),
      { numRuns: 2000 }
    )
  })
})
