import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { InvalidRequestError, normalizeParameters, percentDecode, percentEncode, signatureBaseString } from "../src/index"

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
const wellFormed = fc.string({ unit: "binary", maxLength: 40 }).filter((s) => !LONE_SURROGATE.test(s))
const anyText = fc.oneof(wellFormed, fc.string({ unit: "grapheme", maxLength: 20 }), fc.string({ maxLength: 20 }))
const pair = fc.tuple(anyText, anyText)
const ENCODED_ALPHABET = /^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})*$/

/** Byte-by-byte reference encoder: the spec text, not the optimised code. */
function referenceEncode(s: string): string {
  let out = ""
  for (const byte of Buffer.from(s, "utf8")) {
    const c = String.fromCharCode(byte)
    out += /[A-Za-z0-9\-._~]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`
  }
  return out
}

describe("percentEncode", () => {
  it("decode(enc(s)) = s", () => {
    fc.assert(fc.property(anyText, (s) => percentDecode(percentEncode(s)) === s))
  })

  it("emits only unreserved characters and uppercase %XX", () => {
    fc.assert(fc.property(anyText, (s) => ENCODED_ALPHABET.test(percentEncode(s))))
  })

  it("equals the byte-by-byte reference", () => {
    fc.assert(fc.property(anyText, (s) => percentEncode(s) === referenceEncode(s)))
  })

  it("is idempotent only on already-unreserved strings", () => {
    fc.assert(fc.property(anyText, (s) => (percentEncode(percentEncode(s)) === percentEncode(s)) === /^[A-Za-z0-9\-._~]*$/.test(s)))
  })

  it.each([
    ["!'()*", "%21%27%28%29%2A"],
    [" ", "%20"],
    ["+", "%2B"],
    ["é", "%C3%A9"],
    ["~-._", "~-._"],
    ["😀", "%F0%9F%98%80"],
    ["", ""]
  ])("%j → %s", (input, output) => {
    expect(percentEncode(input)).toBe(output)
  })

  it("refuses lone surrogates with a typed error", () => {
    fc.assert(fc.property(wellFormed, fc.integer({ min: 0xd800, max: 0xdfff }), wellFormed, (a, unit, b) => {
      const text = `${a}${String.fromCharCode(unit)}${b}`
      fc.pre(LONE_SURROGATE.test(text))
      expect(() => percentEncode(text)).toThrow(InvalidRequestError)
    }))
  })

  it("percentDecode refuses sloppy encodings", () => {
    for (const bad of ["a b", "%2", "%zz", "%C3", "a+b", "é"]) expect(percentDecode(bad)).toBeUndefined()
    expect(percentDecode("%c3%a9")).toBe("é")
  })
})

describe("normalizeParameters", () => {
  it("does not depend on the order of the pairs", () => {
    fc.assert(fc.property(fc.array(pair, { maxLength: 12 }).chain((pairs) => fc.tuple(fc.constant(pairs), fc.shuffledSubarray(pairs, { minLength: pairs.length, maxLength: pairs.length }))), ([pairs, shuffled]) => {
      expect(normalizeParameters(shuffled)).toBe(normalizeParameters(pairs))
    }))
  })

  it("keeps every pair, duplicates included, sorted by encoded name then encoded value", () => {
    fc.assert(fc.property(fc.array(pair, { minLength: 1, maxLength: 12 }), (pairs) => {
      const doubled = [...pairs, ...pairs]
      const pieces = normalizeParameters(doubled).split("&")
      expect(pieces).toHaveLength(doubled.length)
      const split = pieces.map((p) => p.split("=") as [string, string])
      for (let i = 1; i < split.length; i++) {
        const [a, b] = [split[i - 1] as [string, string], split[i] as [string, string]]
        expect(a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1])).toBe(true)
      }
      const expected = doubled.map(([n, v]) => `${referenceEncode(n)}=${referenceEncode(v)}`)
      expect([...pieces].sort()).toEqual(expected.sort())
    }))
  })

  it("sorts by encoded bytes, not UTF-16 order of the raw strings", () => {
    // U+FF01 (%EF%BC%81) sorts before U+1F600 (%F0%9F%98%80) although its UTF-16 unit is larger.
    expect(normalizeParameters([["a", "😀"], ["a", "！"]])).toBe("a=%EF%BC%81&a=%F0%9F%98%80")
    expect(normalizeParameters([["a", "9"], ["a", "10"]])).toBe("a=10&a=9")
    expect(normalizeParameters([["amount-x", "1"], ["amount", "2"]])).toBe("amount=2&amount-x=1")
    expect(normalizeParameters([["a", "2"], ["a", ""]])).toBe("a=&a=2")
  })

  it("accepts pairs, URLSearchParams and records alike", () => {
    const pairs: Array<[string, string]> = [["b", "1"], ["a", "x"], ["a", "y"]]
    const expected = normalizeParameters(pairs)
    expect(normalizeParameters(new URLSearchParams(pairs))).toBe(expected)
    expect(normalizeParameters({ b: "1", a: ["y", "x"], c: undefined })).toBe(expected)
  })
})

describe("signatureBaseString", () => {
  const urls = fc.constantFrom("https://gate.example.net/p/1", "http://h.example:8080/a%20b/", "https://h.example")

  it("signs query parameters exactly like the same pairs in the body", () => {
    fc.assert(fc.property(urls, fc.array(pair, { maxLength: 8 }), fc.array(pair, { maxLength: 4 }), (url, query, body) => {
      const withQuery = query.length === 0 ? url : `${url}?${new URLSearchParams(query).toString()}`
      expect(signatureBaseString("POST", withQuery, body)).toBe(signatureBaseString("POST", url, [...query, ...body]))
    }))
  })

  it("decodes %XX in query names and values and '+' as a space", () => {
    const url = "https://h.example/p?a%20b=c%2Bd&e=f+g&x%5F=%7e"
    expect(signatureBaseString("POST", url, [])).toBe(signatureBaseString("POST", "https://h.example/p", [["a b", "c+d"], ["e", "f g"], ["x_", "~"]]))
  })

  it("is three &-separated parts whose last two decode to the URI and the normalised parameters", () => {
    fc.assert(fc.property(urls, fc.array(pair, { maxLength: 8 }), (url, body) => {
      const parts = signatureBaseString("POST", url, body).split("&")
      expect(parts).toHaveLength(3)
      expect(parts[0]).toBe("POST")
      expect(decodeURIComponent(parts[2] as string)).toBe(normalizeParameters(body))
    }))
  })

  it.each(["ftp://h/x", "/relative", "https://user:pw@h/x", "https://h:port/x", "not a url", "https://[::1/x"])(
    "refuses %j with a typed error",
    (url) => {
      expect(() => signatureBaseString("POST", url, [])).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", rule: "invalid-url" }))
    }
  )

  it("refuses a malformed query escape instead of signing a replacement character", () => {
    expect(() => signatureBaseString("POST", "https://h/x?a=%zz", [])).toThrow(InvalidRequestError)
    expect(() => signatureBaseString("POST", "https://h/x?a=%C3", [])).toThrow(InvalidRequestError)
  })
})
