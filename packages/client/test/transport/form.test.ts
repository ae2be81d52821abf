import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { fingerprintOf } from "../../src/intents/ledger"
import { formEncode, serializeForm } from "../../src/transport/fetch"

describe("form body", () => {
  it("encodes every string exactly as URLSearchParams does (lone surrogates included)", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.constantFrom("a b", "!'()~*-._", "é€😀", "\uD800x", "x\uDC00", "%20+&=")), (value) => {
        expect(formEncode(value)).toBe(new URLSearchParams([["", value]]).toString().slice(1))
      }),
      { numRuns: 3000 }
    )
  })

  it("writes the fields in order and the control last, as new URLSearchParams({ ...fields, control }) does", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== "control"), fc.string({ maxLength: 12 })), fc.option(fc.stringMatching(/^[0-9a-f]{40}$/), { nil: undefined }), (fields, control) => {
        const expected = new URLSearchParams(control === undefined ? fields : { ...fields, control }).toString()
        expect(serializeForm({ fields, control })).toBe(expected)
      }),
      { numRuns: 1000 }
    )
  })
})

describe("request fingerprint", () => {
  // The digest as it was first defined (one hash update per piece): fingerprints kept in a shared
  // store by an older client must still match.
  const reference = (operation: string, endpointId: string, values: Readonly<Record<string, string>>) => {
    const hash = createHash("sha256").update(operation).update("\u0000").update(endpointId)
    for (const k of Object.keys(values).sort()) hash.update("\u0000").update(k).update("=").update(values[k]!)
    return hash.digest("hex")
  }

  it("is unchanged: same digest as one update per name and value", () => {
    fc.assert(
      fc.property(fc.constantFrom("SALE", "CAPTURE"), fc.stringMatching(/^[0-9]{1,6}$/), fc.dictionary(fc.string({ minLength: 1, maxLength: 10 }), fc.string({ maxLength: 20, unit: "grapheme" })), (op, endpoint, values) => {
        expect(fingerprintOf(op, endpoint, values)).toBe(reference(op, endpoint, values))
      }),
      { numRuns: 1000 }
    )
  })
})
