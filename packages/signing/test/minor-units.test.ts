import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  currencyExponent,
  DEFAULT_MINOR_UNITS,
  InvalidAmountError,
  minorUnitsExponent,
  NO_MINOR_UNIT_CODES,
  toMinorUnits,
  UnknownCurrencyError,
  type MinorUnits
} from "../src/index"
import { controlVectors } from "./vectors"

const ISO = { minorUnits: "iso4217" } as const

function amountError(amount: unknown, currency: string, minorUnits: MinorUnits = "iso4217"): InvalidAmountError {
  try {
    toMinorUnits(amount as string, currency, { minorUnits })
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidAmountError)
    return error as InvalidAmountError
  }
  throw new Error("expected InvalidAmountError")
}

describe("currencyExponent", () => {
  it("matches the vectors' exponent for every currency they use (from currency-codes data)", () => {
    for (const [code, exponent] of Object.entries(controlVectors.currency_exponents)) {
      expect([code, currencyExponent(code)]).toEqual([code, exponent])
    }
  })

  it("refuses codes that are unknown, lower case or withdrawn", () => {
    for (const code of ["ABC", "usd", "US", "USDX", "", "HRK", "SLL"]) {
      expect(() => currencyExponent(code)).toThrow(UnknownCurrencyError)
    }
    try {
      currencyExponent("usd")
    } catch (error) {
      expect((error as UnknownCurrencyError)._tag).toBe("UnknownCurrencyError")
      expect((error as UnknownCurrencyError).reason).toBe("not-iso-4217")
    }
  })

  it("refuses ISO codes whose minor unit is N.A. instead of treating them as exponent 0", () => {
    for (const code of NO_MINOR_UNIT_CODES) {
      expect(() => currencyExponent(code)).toThrow(expect.objectContaining({ _tag: "UnknownCurrencyError", reason: "no-minor-unit" }))
    }
    expect(() => toMinorUnits("1", "XAU", ISO)).toThrow(UnknownCurrencyError)
  })

  it("keeps NO_MINOR_UNIT_CODES equal to the N.A. entries of the ISO list currency-codes ships", () => {
    const require = createRequire(import.meta.url)
    const xml = readFileSync(require.resolve("currency-codes/iso-4217-list-one.xml"), "utf8")
    const na = new Set<string>()
    for (const entry of xml.split("<CcyNtry>")) {
      const code = /<Ccy>([A-Z]{3})<\/Ccy>/.exec(entry)?.[1]
      if (code !== undefined && /<CcyMnrUnts>N\.A\.<\/CcyMnrUnts>/.test(entry)) na.add(code)
    }
    expect([...NO_MINOR_UNIT_CODES].sort()).toEqual([...na].sort())
  })
})

describe("toMinorUnits, cents (the default)", () => {
  it("is the default mode", () => {
    expect(DEFAULT_MINOR_UNITS).toBe("cents")
    expect(minorUnitsExponent("JPY")).toBe(2)
    expect(minorUnitsExponent("KWD", { minorUnits: "cents" })).toBe(2)
    expect(minorUnitsExponent("JPY", ISO)).toBe(0)
    expect(minorUnitsExponent("KWD", ISO)).toBe(3)
  })

  it.each([
    ["1000", "JPY", "100000"],
    ["10.500", "KWD", "1050"],
    ["10.5", "JPY", "1050"],
    ["0.29", "USD", "29"],
    ["10", "USD", "1000"],
    ["10.50", "USD", "1050"],
    ["100.000", "ISK", "10000"],
    ["0.5", "BHD", "50"],
    ["0", "KWD", "0"],
    ["0.00", "JPY", "0"],
    ["0.05", "GBP", "5"],
    ["15000", "KRW", "1500000"],
    ["9007199254740993.07", "JPY", "900719925474099307"]
  ])("%s %s → %s", (amount, currency, minor) => {
    expect(toMinorUnits(amount, currency)).toBe(minor)
    expect(toMinorUnits(amount, currency, { minorUnits: "cents" })).toBe(minor)
    expect(toMinorUnits(amount, currency, {})).toBe(minor)
  })

  it.each([["10.505", "KWD"], ["1.001", "USD"], ["1.234", "KWD"], ["0.001", "OMR"], ["7.125", "JOD"]])("%s %s is a precision error, never rounded", (amount, currency) => {
    const error = amountError(amount, currency, "cents")
    expect(error.rule).toBe("precision")
    expect(error.minorUnits).toBe("cents")
    expect(error.message).toContain("second fraction digit")
  })

  it("refuses the same malformed strings as iso4217", () => {
    for (const text of ["-1", "1e3", "", " 10", "10.", ".5", "1,00", "01", "+10", "10\n", "１０"]) {
      expect(amountError(text, "JPY", "cents").rule).toBe("pattern")
    }
    expect(amountError(10.5, "USD", "cents").rule).toBe("not-a-string")
  })

  it("refuses an unknown mode", () => {
    expect(() => toMinorUnits("1", "USD", { minorUnits: "iso" as MinorUnits }))
      .toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "minorUnits", rule: "invalid-value" }))
  })

  it("agrees with BigInt arithmetic (× 100) for any currency", () => {
    const amount = fc.tuple(
      fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
      fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined })
    )
    fc.assert(fc.property(amount, fc.constantFrom(...Object.keys(controlVectors.currency_exponents)), ([whole, fraction], currency) => {
      const text = fraction === undefined ? whole : `${whole}.${fraction}`
      const digits = fraction ?? ""
      if (/[1-9]/.test(digits.slice(2))) {
        expect(amountError(text, currency, "cents").rule).toBe("precision")
      } else {
        expect(toMinorUnits(text, currency)).toBe((BigInt(whole) * 100n + BigInt(digits.slice(0, 2).padEnd(2, "0"))).toString())
      }
    }))
  })
})

describe("toMinorUnits, iso4217", () => {
  it.each([
    ["10.5", "USD", "1050"],
    ["10", "USD", "1000"],
    ["10.00", "JPY", "10"],
    ["100.000", "ISK", "100"],
    ["0.05", "GBP", "5"],
    ["0.00", "EUR", "0"],
    ["0", "JPY", "0"],
    ["0", "KWD", "0"],
    ["0.001", "OMR", "1"],
    ["0.5", "BHD", "500"],
    ["1.234", "KWD", "1234"],
    ["12.5", "TND", "12500"],
    ["1.2340000", "KWD", "1234"],
    ["9007199254740993.07", "USD", "900719925474099307"],
    ["123456789012345678901234567890.12", "EUR", "12345678901234567890123456789012"],
    ["1.0001", "CLF", "10001"]
  ])("%s %s → %s", (amount, currency, minor) => {
    expect(toMinorUnits(amount, currency, ISO)).toBe(minor)
  })

  it.each([
    ["-1", "pattern"], ["1e3", "pattern"], ["", "pattern"], [" 10", "pattern"], ["10 ", "pattern"],
    ["10.", "pattern"], [".5", "pattern"], ["1,00", "pattern"], ["01", "pattern"], ["00", "pattern"],
    ["+10", "pattern"], ["10\n", "pattern"], ["\n10", "pattern"], ["１０", "pattern"], ["١٠", "pattern"],
    ["0x10", "pattern"], ["Infinity", "pattern"], ["NaN", "pattern"], ["1_000", "pattern"], ["1.2.3", "pattern"],
    ["1.001", "precision"], ["0.001", "precision"], ["10.000000001", "precision"]
  ])("rejects %j (%s) for USD", (amount, rule) => {
    const error = amountError(amount, "USD")
    expect(error._tag).toBe("InvalidAmountError")
    expect(error.rule).toBe(rule)
    expect(error.field).toBe("amount")
  })

  it("rejects non-zero digits beyond exponent 0 and 3", () => {
    expect(amountError("10.50", "JPY").rule).toBe("precision")
    expect(amountError("1.2345", "KWD").rule).toBe("precision")
  })

  it("rejects numbers outright (floats are never accepted)", () => {
    expect(amountError(10.5, "USD").rule).toBe("not-a-string")
    expect(amountError(10n, "USD").rule).toBe("not-a-string")
  })

  it("never echoes the amount in the error message", () => {
    const error = amountError("4111 1111 1111 1111", "USD")
    expect(error.message).not.toContain("4111")
    expect(JSON.stringify(error)).not.toContain("4111")
  })

  it("agrees with BigInt arithmetic on random well-formed amounts", () => {
    const codes = Object.keys(controlVectors.currency_exponents)
    const amount = fc.tuple(
      fc.oneof(fc.constant("0"), fc.stringMatching(/^[1-9][0-9]{0,25}$/)),
      fc.option(fc.stringMatching(/^[0-9]{1,6}$/), { nil: undefined })
    )
    fc.assert(fc.property(amount, fc.constantFrom(...codes), ([whole, fraction], currency) => {
      const exponent = currencyExponent(currency)
      const text = fraction === undefined ? whole : `${whole}.${fraction}`
      const digits = fraction ?? ""
      const kept = digits.slice(0, exponent).padEnd(exponent, "0")
      const dropped = digits.slice(exponent)
      if (/[1-9]/.test(dropped)) {
        expect(amountError(text, currency).rule).toBe("precision")
      } else {
        const expected = (BigInt(whole) * 10n ** BigInt(exponent) + BigInt(kept === "" ? "0" : kept)).toString()
        expect(toMinorUnits(text, currency, ISO)).toBe(expected)
      }
    }))
  })

  it("rejects every string outside the amount pattern", () => {
    const pattern = new RegExp(controlVectors.amount_pattern)
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 12 }), (text) => {
      fc.pre(!pattern.test(text) || text.includes("\n"))
      expect(() => toMinorUnits(text, "USD", ISO)).toThrow(InvalidAmountError)
      expect(() => toMinorUnits(text, "USD")).toThrow(InvalidAmountError)
    }))
  })
})
