import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { constantTimeEqual, decodeSha1Hex } from "../src/constant-time"
import { compareControl } from "../src/control"

const digest = createHash("sha1").update("paykit control comparison").digest("hex")
const digestBytes = new Uint8Array(createHash("sha1").update("paykit control comparison").digest())

/** What the hex-text comparison must equal: the received hex decoded to bytes and compared as bytes (its earlier form). */
const reference = (received: string | undefined): string => {
  if (received === undefined || received === "") return "missing"
  const bytes = decodeSha1Hex(received)
  if (bytes === undefined) return "malformed"
  return constantTimeEqual(digestBytes, bytes) ? "ok" : "mismatch"
}
const verdict = (received: string | undefined): string => {
  const result = compareControl(digest, received)
  return result.ok ? "ok" : result.reason
}

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

describe("compareControl on hex text equals decoding the received hex and comparing bytes (issue #14 hot path)", () => {
  it("on fixed cases (a digit's case-bit twin, a control character, is not that digit)", () => {
    for (const value of [digest, digest.toUpperCase(), "", undefined, digest.slice(1), `${digest}0`, digest.replace(/[0-9]/, (d) => String.fromCharCode(d.charCodeAt(0) - 0x20)), digest.replace(/[a-f]/, "G")]) {
      expect(verdict(value), String(value)).toBe(reference(value))
    }
    expect(verdict(digest)).toBe("ok")
    expect(verdict(digest.toUpperCase())).toBe("ok")
  })

  it("on values near the digest and on anything", () => {
    fc.assert(fc.property(received, (value) => {
      expect(verdict(value)).toBe(reference(value))
    }), { numRuns: 20_000 })
  })
})
