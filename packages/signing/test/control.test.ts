import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import {
  controlDigest,
  ControlVerificationError,
  InvalidAmountError,
  InvalidRequestError,
  UnknownCurrencyError,
  verifyControl,
  type ControlScheme
} from "../src/index"
import { controlVectors, type ControlCase } from "./vectors"

const scheme = (code: string): ControlScheme => {
  const row = controlVectors.fields[code]
  if (row === undefined) throw new Error(`no fields for ${code}`)
  return { code, fields: row.values }
}

// The shared format gives C6's currency at top level; in a real body it is a form field.
const bodyOf = (c: ControlCase): Record<string, string> => (c.currency === null ? c.values : { ...c.values, currency: c.currency })
// Each amount case names its mode; the others must give the same digest in either mode.
const optionsOf = (c: ControlCase) => ({
  ...(c.values["endpointId"] === undefined ? {} : { endpointId: c.values["endpointId"] }),
  ...(c.minor_units === undefined ? {} : { minorUnits: c.minor_units })
})

const valid = controlVectors.cases.filter((c) => c.error === undefined)
const invalid = controlVectors.cases.filter((c) => c.error !== undefined)

describe("control.json vectors", () => {
  it("has cases for every code C1–C8", () => {
    expect(new Set(controlVectors.cases.map((c) => c.code))).toEqual(new Set(["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"]))
  })

  it("names the mode on every C4/C5/C6 case and on no other; cents is the vectors' default", () => {
    for (const c of controlVectors.cases) {
      expect([c.id, c.minor_units !== undefined]).toEqual([c.id, ["C4", "C5", "C6"].includes(c.code)])
    }
    expect(controlVectors.minor_units_modes["cents"]?.default).toBe(true)
    expect(controlVectors.minor_units_modes["iso4217"]?.default).toBe(false)
  })

  it.each(valid.filter((c) => c.minor_units === "cents").map((c) => [c.id, c] as const))("%s: cents is the default (no mode given)", (_id, c) => {
    const { minorUnits: _mode, ...defaults } = optionsOf(c)
    expect(controlDigest(scheme(c.code), bodyOf(c), c.merchant_control_key, defaults)).toBe(c.control)
  })

  it("every -cents twin differs from its iso4217 original exactly where the currency's exponent is not 2", () => {
    const byId = new Map(controlVectors.cases.map((c) => [c.id, c]))
    const twins = controlVectors.cases.filter((c) => c.id.endsWith("-cents"))
    expect(twins.length).toBeGreaterThanOrEqual(10)
    for (const twin of twins) {
      const original = byId.get(twin.id.slice(0, -"-cents".length))
      expect(original?.minor_units).toBe("iso4217")
      expect(twin.values).toEqual(original?.values)
      // Signing the original's inputs in cents gives the twin's answer, and the reverse.
      const run = (c: ControlCase, minorUnits: "cents" | "iso4217") => {
        try {
          return controlDigest(scheme(c.code), bodyOf(c), c.merchant_control_key, { ...optionsOf(c), minorUnits })
        } catch (error) {
          return (error as { _tag?: string })._tag
        }
      }
      const expected = (c: ControlCase | undefined) => (c?.error === undefined ? c?.control : "InvalidAmountError")
      expect([twin.id, run(original as ControlCase, "cents")]).toEqual([twin.id, expected(twin)])
      expect([twin.id, run(twin, "iso4217")]).toEqual([twin.id, expected(original)])
    }
  })

  it.each(valid.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    const digest = controlDigest(scheme(c.code), bodyOf(c), c.merchant_control_key, optionsOf(c))
    expect(digest).toBe(c.control)
    expect(verifyControl(scheme(c.code), bodyOf(c), c.control, c.merchant_control_key, optionsOf(c))).toEqual({ ok: true })
    expect(verifyControl(scheme(c.code), bodyOf(c), c.control?.toUpperCase(), c.merchant_control_key, optionsOf(c)).ok).toBe(true)
  })

  it.each(invalid.map((c) => [c.id, c] as const))("%s is invalid_amount", (_id, c) => {
    expect(c.error).toBe("invalid_amount")
    expect(() => controlDigest(scheme(c.code), bodyOf(c), c.merchant_control_key, optionsOf(c))).toThrow(InvalidAmountError)
  })
})

describe("controlDigest", () => {
  const C6 = scheme("C6")
  const C4 = scheme("C4")
  const C7 = scheme("C7")

  it("reproduces the gateway's published sale example", () => {
    const digest = controlDigest(
      C6,
      { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" },
      "B17F59B4-A7DC-41B4-8FF9-37D986B43D20",
      { endpointId: 1111 }
    )
    expect(digest).toBe("c6bdd88a78834ef4b863b088827a459f039e8257")
  })

  it("accepts endpointId as string, number or bigint (an endpoint-group id works alike)", () => {
    const body = { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" }
    const key = "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
    const expected = "c6bdd88a78834ef4b863b088827a459f039e8257"
    expect(controlDigest(C6, body, key, { endpointId: "1111" })).toBe(expected)
    expect(controlDigest(C6, body, key, { endpointId: 1111n })).toBe(expected)
    expect(() => controlDigest(C6, body, key, { endpointId: 2 ** 60 })).toThrow(InvalidRequestError)
  })

  it("needs endpointId for C2/C6 and a currency beside an amount (in both modes)", () => {
    const body = { client_orderid: "x", amount: "1.00", currency: "USD", email: "e" }
    expect(() => controlDigest(C6, body, "k")).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "endpointId", rule: "missing" }))
    for (const minorUnits of ["cents", "iso4217"] as const) {
      expect(() => controlDigest(C6, { ...body, currency: undefined }, "k", { endpointId: 1, minorUnits }))
        .toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "currency", rule: "missing" }))
    }
    expect(() => controlDigest(C6, { ...body, currency: "ZZZ" }, "k", { endpointId: 1, minorUnits: "iso4217" })).toThrow(UnknownCurrencyError)
  })

  it("signs amounts in cents by default for every currency, ISO exponents only when asked", () => {
    const C5 = scheme("C5")
    const rebill = (amount: string, currency: string) => ({ login: "l", client_orderid: "c", cardrefid: "r", amount, currency })
    const sha1 = (text: string) => createHash("sha1").update(text, "utf8").digest("hex")
    expect(controlDigest(C5, rebill("1000", "JPY"), "k")).toBe(sha1("lcr100000JPYk"))
    expect(controlDigest(C5, rebill("1000", "JPY"), "k", { minorUnits: "cents" })).toBe(sha1("lcr100000JPYk"))
    expect(controlDigest(C5, rebill("1000", "JPY"), "k", { minorUnits: "iso4217" })).toBe(sha1("lcr1000JPYk"))
    expect(controlDigest(C5, rebill("10.500", "KWD"), "k")).toBe(sha1("lcr1050KWDk"))
    expect(controlDigest(C5, rebill("10.500", "KWD"), "k", { minorUnits: "iso4217" })).toBe(sha1("lcr10500KWDk"))
    expect(() => controlDigest(C5, rebill("10.505", "KWD"), "k")).toThrow(expect.objectContaining({ _tag: "InvalidAmountError", rule: "precision", minorUnits: "cents" }))
    // cents does not consult the currency's exponent, so a code the ISO list lacks still signs.
    expect(controlDigest(C5, rebill("1", "XAU"), "k")).toBe(sha1("lcr100XAUk"))
    expect(() => controlDigest(C5, rebill("1", "XAU"), "k", { minorUnits: "iso4217" })).toThrow(UnknownCurrencyError)
  })

  it("refuses a mode that is neither cents nor iso4217 instead of falling back", () => {
    const body = { login: "l", client_orderid: "c", orderid: "o", amount: "1.00", currency: "USD" }
    expect(() => controlDigest(C4, body, "k", { minorUnits: "ISO4217" as "iso4217" }))
      .toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "minorUnits", rule: "invalid-value" }))
  })

  it("C4 omits amount and currency when they are not sent", () => {
    const base = { login: "l", client_orderid: "c", orderid: "o" }
    expect(controlDigest(C4, base, "k")).toBe(controlDigest(scheme("C3"), base, "k"))
    expect(controlDigest(C4, { ...base, amount: "1.00", currency: "USD" }, "k")).not.toBe(controlDigest(C4, base, "k"))
  })

  it("C7 treats an absent orderid as the empty string", () => {
    const base = { login: "l", client_orderid: "c" }
    expect(controlDigest(C7, base, "k")).toBe(controlDigest(C7, { ...base, orderid: "" }, "k"))
    expect(controlDigest(C7, { ...base, orderid: undefined }, "k")).toBe(controlDigest(C7, base, "k"))
  })

  it("hashes values exactly as given (no trimming, no case folding)", () => {
    const a = controlDigest(C7, { login: "l", client_orderid: " c", orderid: "o" }, "k")
    const b = controlDigest(C7, { login: "l", client_orderid: "c", orderid: "o" }, "k")
    const c = controlDigest(C7, { login: "L", client_orderid: "c", orderid: "o" }, "k")
    expect(new Set([a, b, c]).size).toBe(3)
  })

  it("refuses an empty key and non-string values", () => {
    expect(() => controlDigest(C7, { login: "l", client_orderid: "c" }, "")).toThrow(InvalidRequestError)
    expect(() => controlDigest(C7, { login: 5 as unknown as string, client_orderid: "c" }, "k"))
      .toThrow(expect.objectContaining({ field: "login", rule: "not-a-string" }))
  })

  it("never puts the key in an error", () => {
    try {
      controlDigest(C6, { amount: "1e3", currency: "USD" }, "SECRET-KEY-123", { endpointId: 1 })
    } catch (error) {
      expect(String(error)).not.toContain("SECRET-KEY-123")
      expect(JSON.stringify(error)).not.toContain("SECRET-KEY-123")
    }
  })
})

describe("verifyControl", () => {
  const C3 = scheme("C3")
  const body = { login: "merchant-login", client_orderid: "ord-3001", orderid: "123456" }
  const key = "B17F59B4-A7DC-41B4-8FF9-37D1ECEE0B5E"
  const good = "3b4be1b5f823d7a5fee100ed4f69c647309e5876"

  it("accepts lower and upper case hex", () => {
    expect(verifyControl(C3, body, good, key).ok).toBe(true)
    expect(verifyControl(C3, body, good.toUpperCase(), key).ok).toBe(true)
  })

  it.each([
    ["missing", undefined],
    ["missing", ""],
    ["malformed", good.slice(1)],
    ["malformed", `${good}0`],
    ["malformed", `${good.slice(1)}g`],
    ["malformed", ` ${good.slice(1)}`],
    ["mismatch", `${good.slice(0, -1)}4`],
    ["mismatch", "0".repeat(40)]
  ])("rejects with reason %s: %j", (reason, received) => {
    const result = verifyControl(C3, body, received, key)
    expect(result.ok).toBe(false)
    if (!result.ok) {
      expect(result.reason).toBe(reason)
      expect(result.error).toBeInstanceOf(ControlVerificationError)
      expect(result.error._tag).toBe("ControlVerificationError")
      expect(result.error.reason).toBe(reason)
    }
  })

  it("rejects a control made with another key or another value", () => {
    expect(verifyControl(C3, body, good, `${key}x`).ok).toBe(false)
    expect(verifyControl(C3, { ...body, orderid: "123457" }, good, key).ok).toBe(false)
  })

  it("throws the amount error rather than reporting a mismatch", () => {
    expect(() => verifyControl(scheme("C4"), { ...body, amount: "1,00", currency: "USD" }, good, key)).toThrow(InvalidAmountError)
  })
})
