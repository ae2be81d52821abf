import { describe, expect, it } from "vitest"
import { controlDigest, explainControl, explainOAuth, signControl, signOAuth } from "../src/index"

const KEY = "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"

describe("explainControl", () => {
  it("gives the parts of SALE's C6 in digest order, the amount in cents, and they digest to signControl's control", () => {
    const values = { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" }
    const x = explainControl("SALE", values, { endpointId: "1111" })
    expect(x.code).toBe("C6")
    expect(x.parts.map((p) => [p.field, p.source, p.inDigest])).toEqual([
      ["endpointId", "path", "1111"],
      ["client_orderid", "body", "902B4FF5"],
      ["amount", "body", "1042"],
      ["email", "body", "john.smith@gmail.com"]
    ])
    expect(x.minorUnits).toBe("cents")
    const again = controlDigest({ code: x.code, fields: x.parts.map((_, i) => `part${i}`) }, Object.fromEntries(x.parts.map((p, i) => [`part${i}`, p.inDigest])), KEY)
    expect(again).toBe(signControl("SALE", values, { key: KEY, endpointId: 1111 }))
  })

  it("says why an amount does not enter: no currency, or a typed error naming the rule", () => {
    const none = explainControl("SALE", { client_orderid: "1", amount: "10.42", email: "a@b.c" }, { endpointId: "1" })
    expect(none.parts[2]?.amount).toEqual({ ok: false, currency: undefined, minorUnits: "cents" })
    const bad = explainControl("SALE", { client_orderid: "1", amount: "10.421", currency: "USD", email: "a@b.c" }, { endpointId: "1" })
    expect(bad.parts[2]?.amount?.ok).toBe(false)
    expect(bad.parts[2]?.inDigest).toBe("")
  })

  it("marks an absent field and a missing endpoint id as adding nothing", () => {
    const x = explainControl("SALE", { client_orderid: "1", email: "a@b.c" })
    expect(x.parts[0]).toEqual({ field: "endpointId", source: "path", given: undefined, inDigest: "" })
    expect(x.parts[2]).toEqual({ field: "amount", source: "body", given: undefined, inDigest: "" })
  })
})

describe("explainOAuth", () => {
  it("gives the base string signOAuth signs, each parameter with its source, in RFC 5849 order", () => {
    const url = "HTTPS://Gate.Example.NET:443/paynet/api/v2/payout/1?b=x%20y"
    const body: ReadonlyArray<readonly [string, string]> = [["login", "m"], ["amount", "1.00"], ["a", "2"], ["a", "1"]]
    const signed = signOAuth({ url, params: body, consumerKey: "m", signatureMethod: "HMAC-SHA1", consumerSecret: KEY }, { timestamp: "1700000000", nonce: "n1" })
    const oauth = Object.entries(signed.oauthParams).filter((e): e is [string, string] => typeof e[1] === "string")
    const x = explainOAuth({ url, body, oauth })
    expect(x.baseString).toBe(signed.baseString)
    expect(x.baseStringUri).toBe("https://gate.example.net/paynet/api/v2/payout/1")
    expect(x.parameters.slice(0, 3).map((p) => [p.source, p.encoded])).toEqual([["body", "a=1"], ["body", "a=2"], ["body", "amount=1.00"]])
    expect(x.parameters.find((p) => p.name === "b")).toEqual({ source: "query", name: "b", value: "x y", encoded: "b=x%20y" })
    expect(x.parameters.some((p) => p.name === "oauth_signature")).toBe(false)
  })

  it("refuses a URL that is not absolute http(s), as signing does", () => {
    expect(() => explainOAuth({ url: "/relative" })).toThrow(/url/)
  })
})
