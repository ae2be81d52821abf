import { Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import type { components } from "../src/generated/openapi"
import * as generated from "../src/generated/schemas"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
type Components = components["schemas"]
type Registry = typeof generated.schemas

// Checked by `tsc` (the typecheck task): one entry per component, each `true` only when the Effect
// Schema's decoded type is identical to the openapi-typescript type.
type SchemaMatchesWire = { readonly [K in keyof Components]: K extends keyof Registry ? Equals<Schema.Schema.Type<Registry[K]>, Components[K]> : false }
const everySchemaMatches: { readonly [K in keyof Components]: true } = {} as SchemaMatchesWire
type SameNames = Equals<keyof Components, keyof Registry>
const sameNames: SameNames = true

describe("Effect Schemas against openapi-typescript types", () => {
  it("has one Schema per component schema, with the same names", () => {
    expect(sameNames).toBe(true)
    expect(everySchemaMatches).toBeDefined()
    expectTypeOf<Schema.Schema.Type<typeof generated.SaleRequest>>().toEqualTypeOf<Components["SaleRequest"]>()
  })

  it("decodes a status reply and rejects one with a wrong status", () => {
    const ok = {
      type: "status-response",
      status: "approved",
      "serial-number": "00000000-0000-0000-0000-000002d9b22a",
      "merchant-order-id": "inv4097763",
      "paynet-order-id": 6768788
    }
    expect(Schema.decodeUnknownSync(generated.StatusResponse)(ok)["paynet-order-id"]).toBe(6768788)
    expect(() => Schema.decodeUnknownSync(generated.StatusResponse)({ ...ok, status: "settled" })).toThrow(/status/)
  })

  it("names the field and the rule when a request is malformed", () => {
    const result = Schema.decodeUnknownEither(generated.CaptureRequest)({
      login: "m",
      client_orderid: "c",
      orderid: "12",
      amount: "10.5.0",
      control: "a".repeat(40)
    })
    expect(result._tag).toBe("Left")
    if (result._tag === "Left") expect(String(result.left)).toMatch(/\["amount"\][\s\S]*pattern/)
  })
})
