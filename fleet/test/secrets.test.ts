import { describe, expect, it } from "vitest"
import { masker, maskUrl, passwordOf } from "../src/secrets"

const url = "postgres://fleet:s3cr%2Ft-pw@db.example:5432/paykit?sslmode=require&password=other"

describe("the database URL in the fleet's output", () => {
  it("masks the password and the query of a URL", () => {
    expect(maskUrl(url)).toBe("postgres://fleet:***@db.example:5432/paykit?***")
    expect(maskUrl("postgres://fleet@db.example/paykit")).toBe("postgres://fleet@db.example/paykit")
    expect(passwordOf(url)).toBe("s3cr/t-pw")
  })

  it("masks the URL, and its password alone, wherever a line quotes them", () => {
    const mask = masker([url, undefined])
    const line = `connect ${url} failed; password s3cr/t-pw (s3cr%2Ft-pw) rejected`
    const out = mask(line)
    expect(out).not.toContain("s3cr")
    expect(out).not.toContain("other")
    expect(out).toBe("connect postgres://fleet:***@db.example:5432/paykit?*** failed; password *** (***) rejected")
    expect(masker([])("nothing to hide")).toBe("nothing to hide")
  })
})
