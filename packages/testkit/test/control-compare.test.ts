import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { signControl, verifyOperationControl } from "@paykit/signing"
import { sameSha1Hex } from "../src/auth"
import { requests, testMerchant } from "../src/index"

const options = { key: testMerchant.controlKey, endpointId: testMerchant.endpointId }
const fields = requests.sale()
const digest = signControl("SALE", fields, options)

/** What the simulator's own comparison must equal: signing's verification of the same body. */
const reference = (received: string | undefined) => verifyOperationControl("SALE", { ...fields, control: received }, options).ok

/** Received values near the digest: case flips, one character changed, cut or lengthened, or anything. */
const received = fc.oneof(
  fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }).map((upper) => [...digest].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("")),
  fc.tuple(fc.nat(39), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })).map(([at, c]) => digest.slice(0, at) + c + digest.slice(at + 1)),
  fc.tuple(fc.nat(39), fc.integer({ min: 0, max: 0xffff })).map(([at, code]) => digest.slice(0, at) + String.fromCharCode(code) + digest.slice(at + 1)),
  fc.nat(45).map((n) => (digest + digest).slice(0, n)),
  fc.stringMatching(/^[0-9a-fA-F]{40}$/),
  fc.string({ unit: "binary", maxLength: 42 }),
  fc.constant(undefined)
)

describe("the simulator's control comparison equals verifyOperationControl (issue #14 hot path)", () => {
  it("on fixed cases (a digit's case-bit twin, a control character, is not that digit)", () => {
    for (const value of [digest, digest.toUpperCase(), "", undefined, digest.slice(1), `${digest}0`, digest.replace(/[0-9]/, (d) => String.fromCharCode(d.charCodeAt(0) - 0x20)), digest.replace(/[a-f]/, "G")]) {
      expect(sameSha1Hex(digest, value), String(value)).toBe(reference(value))
    }
    expect(sameSha1Hex(digest, digest)).toBe(true)
    expect(sameSha1Hex(digest, digest.toUpperCase())).toBe(true)
  })

  it("on values near the digest and on anything", () => {
    fc.assert(fc.property(received, (value) => {
      expect(sameSha1Hex(digest, value)).toBe(reference(value))
    }), { numRuns: 20_000 })
  })
})
