import fc from "fast-check"
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { operationSchemas, structFields, type OperationId } from "@paykit/contracts"
import { requestsByOperation } from "../src/index"
import { quickCheck } from "../src/http/validation"

const ids = Object.keys(operationSchemas) as OperationId[]
const decoders = new Map(ids.map((id) => [id, Schema.decodeUnknownEither(operationSchemas[id].request as Schema.Schema<unknown, unknown, never>, { errors: "all", onExcessProperty: "ignore" })]))
const decodes = (id: OperationId, fields: Record<string, string>): boolean => Either.isRight(decoders.get(id)!(fields))

/** Values that break one rule or another (length, pattern, charset, emptiness) next to valid ones. */
const value = fc.oneof(
  fc.constantFrom("", " ", "0", "10.00", "10.001", "-1", "USD", "usd", "EUR1", "4111111111111111", "411111111111111x", "12", "13", "2099", "99", "x".repeat(129), "x".repeat(1025), "a@b.co", "not an email", "https://merchant.example/cb", "javascript:alert(1)", "DE", "DEU", "\u0000", "é", "<b>", "Y", "N", "U", "1", "2", "day", "week", "month", "sale", "ACTIVE"),
  // Lengths at and just past the request Schemas' minLength/maxLength bounds (1, 3, 10, 16, 20, 50, 64, 128, 256, 1024).
  fc.tuple(fc.constantFrom(0, 1, 2, 3, 9, 10, 11, 16, 17, 20, 21, 50, 51, 64, 65, 128, 129, 256, 257, 1024, 1025), fc.constantFrom("x", "1", "a@b")).map(([n, c]) => c.repeat(n).slice(0, n)),
  fc.string({ maxLength: 40 })
)

describe("the quick request check agrees with the Schema decoder (issue #14 hot path)", () => {
  it("every operation's request Schema has a quick check", () => {
    for (const id of ids) expect(quickCheck(id, {}), id).not.toBeUndefined()
  })

  it("accepts the fixtures exactly when the decoder does", () => {
    for (const id of ids) {
      const fields = { ...requestsByOperation[id]({ orderid: "1000001", client_orderid: "c-1", "client-order-id": "c-1", cardrefid: "1", "card-ref-id": "1" }), control: "0".repeat(40) }
      expect(quickCheck(id, fields), id).toBe(decodes(id, fields))
    }
  })

  it("on random changes to valid bodies (a field removed, replaced or added), never accepts what the decoder refuses, and accepts what it accepts", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ids), fc.array(fc.tuple(fc.nat(60), fc.option(value, { nil: undefined })), { maxLength: 4 }), fc.option(fc.tuple(fc.string({ maxLength: 12 }), value), { nil: undefined }), (id, changes, extra) => {
        const fields: Record<string, string> = { ...requestsByOperation[id]({ orderid: "1000001", client_orderid: "c-1" }), control: "0".repeat(40) }
        const names = Object.keys(structFields<object>(operationSchemas[id].request))
        for (const [at, v] of changes) {
          const name = names[at % names.length]!
          if (v === undefined) delete fields[name]
          else fields[name] = v
        }
        if (extra !== undefined) fields[extra[0]] = extra[1]
        expect(quickCheck(id, fields)).toBe(decodes(id, fields))
      }),
      { numRuns: 3000 }
    )
  })
})
