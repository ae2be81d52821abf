import { readFileSync } from "node:fs"
import Ajv2020 from "ajv/dist/2020.js"
import addFormats from "ajv-formats"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { specPath } from "../scripts/generator"
import { schemas } from "../src/index"

type Json = Record<string, any>
const spec = parse(readFileSync(specPath, "utf8")) as Json
const components: Json = spec.components.schemas

const tail = (ref: unknown) => String(ref ?? "").split("/").pop()!

/** Every request and reply schema: what operations send and answer, the error replies and the callback. */
const exchanged = (): Array<string> => {
  const names = new Set<string>()
  for (const item of Object.values<Json>(spec.paths)) {
    for (const op of Object.values<Json>(item)) {
      names.add(tail(op.requestBody.content["application/x-www-form-urlencoded"].schema.$ref))
      for (const response of Object.values<Json>(op.responses)) {
        const content = response.$ref ? spec.components.responses[tail(response.$ref)].content : response.content
        for (const media of Object.values<Json>(content ?? {})) names.add(tail(media.schema.$ref))
      }
    }
  }
  names.add("ServerCallback")
  return [...names].sort()
}

// The spec's component schemas as one JSON Schema 2020-12 document ($refs rewritten to its $defs);
// `x-*` keywords are annotations, which non-strict Ajv ignores.
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
const defs = JSON.parse(JSON.stringify(components).replaceAll("#/components/schemas/", "urn:paykit:spec#/$defs/"))
ajv.addSchema({ $id: "urn:paykit:spec", $defs: defs })
const validatorOf = (name: string) => ajv.getSchema(`urn:paykit:spec#/$defs/${name}`)!

const examples = exchanged().flatMap((name) => ((components[name]?.examples ?? []) as Array<unknown>).map((example, i) => [name, i, example] as const))

describe("examples of the spec", () => {
  it("every request and reply schema has an example (the list names those without)", () => {
    const missing = exchanged().filter((name) => !Array.isArray(components[name]?.examples) || components[name].examples.length === 0)
    expect(missing, `schemas without examples (run pnpm spec:refresh): ${missing.join(", ")}`).toEqual([])
  })

  it.each(examples)("%s example %i is valid by Ajv (JSON Schema 2020-12, formats asserted)", (name, _i, example) => {
    const validate = validatorOf(name)
    const ok = validate(example)
    expect(validate.errors ?? [], JSON.stringify(validate.errors)).toEqual([])
    expect(ok).toBe(true)
  })

  it.each(examples)("%s example %i decodes by the generated Effect Schema", (name, _i, example) => {
    const schema = (schemas as Record<string, Schema.Schema<unknown, unknown, never>>)[name]!
    expect(() => Schema.decodeUnknownSync(schema, { onExcessProperty: "error" })(example)).not.toThrow()
  })

  it("follow this wave's decisions: callbacks of type sale, reversal and chargeback; a status after a chargeback", () => {
    const callbacks = components.ServerCallback.examples as Array<Json>
    expect(callbacks.map((c) => c.type).sort()).toEqual(["chargeback", "reversal", "sale"])
    for (const c of callbacks) expect(c["approval-code"]).toBeDefined()
    expect(new Set(callbacks.map((c) => c["processor-rrn"])).size).toBe(callbacks.length)
    const statuses = components.StatusResponse.examples as Array<Json>
    expect(statuses.some((s) => s["chargeback-amount"] !== undefined && s["transaction-type"] === "chargeback")).toBe(true)
    expect(statuses.some((s) => s.status === "processing" && s.html !== undefined && s["redirect-to"] !== undefined)).toBe(true)
  })

  it("Ajv and the Effect Schemas refuse what the cross-field rules refuse (each validator can fail)", () => {
    const capture = { ...(components.CaptureRequest.examples[0] as Json) }
    delete capture.currency
    expect(validatorOf("CaptureRequest")(capture)).toBe(false)
    expect(Schema.decodeUnknownEither(schemas.CaptureRequest)(capture)._tag).toBe("Left")
    const payout = { ...(components.PayoutRequest.examples[0] as Json), account_number: "DE89370400440532013000" }
    expect(validatorOf("PayoutRequest")(payout)).toBe(false)
    expect(Schema.decodeUnknownEither(schemas.PayoutRequest)(payout)._tag).toBe("Left")
    const sale = { ...(components.AsyncResponse.examples[0] as Json), "paynet-order-id": -5 }
    expect(validatorOf("AsyncResponse")(sale)).toBe(false)
    expect(Schema.decodeUnknownEither(schemas.AsyncResponse)(sale)._tag).toBe("Left")
  })
})
