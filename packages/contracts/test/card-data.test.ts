import { describe, expect, it } from "vitest"
import { CARD_NUMBER_FIELDS, isCardNumberField, isCardSecurityField, isUuid, luhnValid, maskPan, maskPans } from "../src/card-data"

/** A Luhn-valid number of `length` digits built from a random body. */
const withCheckDigit = (body: string): string => {
  for (let d = 0; d <= 9; d++) if (luhnValid(body + d)) return body + d
  throw new Error("no check digit")
}

/** Digit strings of every length in [min, max], a few per length, from a fixed linear generator. */
function numbers(min: number, max: number): ReadonlyArray<string> {
  let seed = 20261127
  const digit = () => ((seed = (seed * 1103515245 + 12345) % 2147483648), String(seed % 10))
  const out: Array<string> = []
  for (let len = min; len <= max; len++) for (let k = 0; k < 25; k++) out.push(Array.from({ length: len }, digit).join(""))
  return out
}

describe("card data", () => {
  it("luhnValid accepts test cards and refuses a changed digit, non-digits and the empty string", () => {
    expect(luhnValid("4111111111111111")).toBe(true)
    expect(luhnValid("4111111111111112")).toBe(false)
    expect(luhnValid("4111 1111 1111 1111")).toBe(false)
    expect(luhnValid("")).toBe(false)
  })

  it("maskPan: 13–19 digits keep BIN and last four; anything else is all *", () => {
    expect(maskPan("4111111111111111")).toBe("411111******1111")
    expect(maskPan("4222222222222")).toBe("422222***2222")
    expect(maskPan("123456789012")).toBe("************")
    expect(maskPan("12345678901234567890")).toBe("*".repeat(20))
    expect(maskPan("4111-1111-1111")).toBe("*".repeat(14))
    for (const pan of numbers(13, 19)) {
      const masked = maskPan(pan)
      expect(masked).toHaveLength(pan.length)
      expect(masked.slice(6, -4)).toMatch(/^\*+$/)
      expect(masked.slice(0, 6) + masked.slice(-4)).toBe(pan.slice(0, 6) + pan.slice(-4))
    }
  })

  it("maskPans masks Luhn-valid runs, split or glued, and leaves other text alone", () => {
    expect(maskPans("pan=4111111111111111x")).toBe("pan=411111******1111x")
    expect(maskPans("card 4111 1111 1111 1111 declined")).toBe("card 411111******1111 declined")
    expect(maskPans("ref 00004111111111111111")).not.toContain("4111111111111111")
    expect(maskPans("order 123 amount 10.00")).toBe("order 123 amount 10.00")
    expect(maskPans("id 12345678901")).toBe("id 12345678901")
    for (const body of numbers(11, 18)) {
      const pan = withCheckDigit(body)
      expect(maskPans(`id_${pan}_x`)).toBe(`id_${maskPan(pan)}_x`)
      expect(maskPans(`card ${pan.replace(/(\d{4})(?=\d)/g, "$1 ")}.`)).not.toMatch(/\d{4} \d{4} \d{4}/)
    }
  })

  it("maskPans leaves a UUID (a serial number) whole, though its dashed digit groups pass the Luhn check", () => {
    // 658-4905-4518-9478-7 holds a Luhn-valid 16-digit window inside this serial number.
    expect(luhnValid("6584905451894787")).toBe(true)
    const serial = "309db658-4905-4518-9478-75f65df46ef1"
    expect(maskPans(`"serial-number":"${serial}"`)).toBe(`"serial-number":"${serial}"`)
    expect(maskPans(serial.toUpperCase())).toBe(serial.toUpperCase())
    // A card number beside it is still masked; one written in UUID-like groups is not a UUID.
    expect(maskPans(`${serial} 4111-1111-1111-1111`)).toBe(`${serial} 411111******1111`)
    expect(maskPans("4111111111111111-0000-0000-0000-000000000000")).not.toContain("4111111111111111")
  })

  it("isUuid holds for one whole UUID only", () => {
    const serial = "309db658-4905-4518-9478-75f65df46ef1"
    expect(isUuid(serial)).toBe(true)
    expect(isUuid(serial.toUpperCase())).toBe(true)
    expect(isUuid(` ${serial}`)).toBe(false)
    expect(isUuid(`${serial} 4111111111111111`)).toBe(false)
    expect(isUuid("4111111111111111")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46ef")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46efg")).toBe(false)
    expect(isUuid("309db65849054518947875f65df46ef1")).toBe(false)
    // Dashes only at 8, 13, 18 and 23; every other character a hex digit of either case.
    expect(isUuid("309DB658-4905-4518-9478-75f65df46ef1")).toBe(true)
    expect(isUuid("309db6584-905-4518-9478-75f65df46ef1")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46e-1")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46ef1 ")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46ef:")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46ef@")).toBe(false)
    expect(isUuid("309db658-4905-4518-9478-75f65df46ef`")).toBe(false)
    expect(isUuid("")).toBe(false)
  })

  it("isUuid agrees with the 8-4-4-4-12 hex pattern on every one-character change of a UUID", () => {
    const pattern = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/
    const serial = "309db658-4905-4518-9478-75f65df46ef1"
    // The characters on either side of each range the check compares (digits, A-F, a-f, the dash).
    const probes = "0123456789abcdefABCDEF-/:@G`g ,.\u00e9\u0660"
    let accepted = 0
    for (let i = 0; i < serial.length; i++) {
      for (const c of probes) {
        const changed = serial.slice(0, i) + c + serial.slice(i + 1)
        expect(isUuid(changed), changed).toBe(pattern.test(changed))
        if (pattern.test(changed)) accepted++
        for (const text of [serial.slice(0, i) + serial.slice(i + 1), serial.slice(0, i) + c + serial.slice(i)]) {
          expect(isUuid(text), text).toBe(false)
        }
      }
    }
    expect(accepted).toBeGreaterThan(500)
  })

  it("names the card fields", () => {
    for (const name of CARD_NUMBER_FIELDS) expect(isCardNumberField(name)).toBe(true)
    expect(isCardNumberField("email")).toBe(false)
    expect(isCardSecurityField("cvv2")).toBe(true)
  })
})
