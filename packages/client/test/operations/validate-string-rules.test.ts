/**
 * The fast input check compiles chains of Effect's own string filters (`minLength`, `maxLength`,
 * `pattern`) into one plain check (src/operations/validate.ts): it must say "valid" exactly where the Schema
 * does, field by field, for every operation; and a filter whose annotations say something else than
 * the filter does is never trusted.
 */
import { operationSchemas, operations, structFields, type OperationId } from "@paykit/contracts"
import { Either, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileFastCheck } from "../../src/operations/validate"

const lengths = (schema: Schema.Schema.Any): Array<number> => {
  const out = new Set([0, 1, 2, 3])
  let ast = schema.ast
  while (ast._tag === "Refinement") {
    const json = ast.annotations[Symbol.for("effect/annotation/JSONSchema")] as { minLength?: number; maxLength?: number } | undefined
    for (const n of [json?.minLength, json?.maxLength]) if (typeof n === "number") for (const d of [-1, 0, 1]) if (n + d >= 0) out.add(n + d)
    ast = ast.from
  }
  return [...out]
}

describe("string filter chains", () => {
  it("agree with the Schema on every field of every operation (boundary lengths, pattern-like and random strings)", () => {
    for (const id of Object.keys(operations) as Array<OperationId>) {
      const fields = structFields<Schema.Struct.Fields>(operationSchemas[id].request)
      for (const [name, field] of Object.entries(fields)) {
        const schema = Schema.Struct({ [name]: field as Schema.Schema.Any })
        const fast = compileFastCheck(schema.ast)
        if (fast === undefined) continue
        const decode = Schema.decodeUnknownEither(schema as unknown as Schema.Schema<unknown>, { onExcessProperty: "error" })
        const chars = fc.constantFrom("a", "Z", "0", "9", "1", "-", ".", "@", " ", "/", ":", "h", "t", "p", "s", "é", "+", "(", ")")
        const strings = fc.oneof(
          fc.constantFrom(...lengths(field as Schema.Schema.Any)).chain((n) => fc.array(chars, { minLength: n, maxLength: n }).map((a) => a.join(""))),
          fc.string({ maxLength: 40 }),
          fc.constantFrom("https://x.test/", "http://", "10.00", "0", "01", "USD", "US", "12", "2030", "a@b", "a@b@c", "4111111111111111", "+1 (555) 0100")
        )
        fc.assert(
          fc.property(strings, (value) => {
            const input = { [name]: value }
            expect(fast(input), `${id}.${name} = ${JSON.stringify(value)}`).toBe(Either.isRight(decode(input)))
          }),
          { numRuns: 60 }
        )
      }
    }
  })

  it("a filter whose annotations say another bound than it tests is called, not trusted", () => {
    const lying = Schema.String.pipe(Schema.filter((s) => s.length <= 3, { schemaId: Schema.MaxLengthSchemaId, jsonSchema: { maxLength: 10 } }))
    const fast = compileFastCheck(Schema.Struct({ f: lying }).ast)!
    expect(fast({ f: "abc" })).toBe(true)
    expect(fast({ f: "abcdef" })).toBe(false)
    const lyingMin = Schema.String.pipe(Schema.filter((s) => s.length >= 5, { schemaId: Schema.MinLengthSchemaId, jsonSchema: { minLength: 1 } }))
    const fastMin = compileFastCheck(Schema.Struct({ f: lyingMin }).ast)!
    expect(fastMin({ f: "ab" })).toBe(false)
    expect(fastMin({ f: "abcde" })).toBe(true)
  })

  it("a global pattern is tested from its start every time, as Effect's pattern filter does", () => {
    const fast = compileFastCheck(Schema.Struct({ f: Schema.String.pipe(Schema.pattern(/^[0-9]+$/g), Schema.maxLength(5)) }).ast)!
    for (let i = 0; i < 4; i++) expect(fast({ f: "123" })).toBe(true)
    expect(fast({ f: "12a" })).toBe(false)
    expect(fast({ f: "123456" })).toBe(false)
  })
})
