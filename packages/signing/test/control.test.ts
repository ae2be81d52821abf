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
const optionsOf = (c: ControlCase) => (c.values["endpointId"] === undefined ? {} : { endpointId: c.values["endpointId"] })

const valid = controlVectors.cases.filter((c) => c.error === undefined)
const invalid = controlVectors.cases.filter((c) => c.error !== undefined)

describe("control.json vectors", () => {
  it("has cases for every code C1–C8", () => {
    expect(new Set(controlVectors.cases.map((c) => c.code))).toEqual(new Set(["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"]))
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

  it("needs endpointId for C2/C6 and a currency beside an amount", () => {
    const body = { client_orderid: "x", amount: "1.00", currency: "USD", email: "e" }
    expect(() => controlDigest(C6, body, "k")).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "endpointId", rule: "missing" }))
    expect(() => controlDigest(C6, { ...body, currency: undefined }, "k", { endpointId: 1 }))
      .toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "currency", rule: "missing" }))
    expect(() => controlDigest(C6, { ...body, currency: "ZZZ" }, "k", { endpointId: 1 })).toThrow(UnknownCurrencyError)
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
