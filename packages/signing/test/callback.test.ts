import { describe, expect, it } from "vitest"
import { callbackControl, ControlVerificationError, InvalidRequestError, verifyCallbackControl } from "../src/index"
import { callbackVectors } from "./vectors"

describe("callback.json vectors", () => {
  it.each(callbackVectors.cases.map((c) => [c.id, c] as const))("%s", (_id, c) => {
    expect(callbackControl(c.values, c.merchant_control_key)).toBe(c.control)
    expect(verifyCallbackControl(c.values, c.control, c.merchant_control_key).ok).toBe(true)
    expect(verifyCallbackControl(c.values, c.control.toUpperCase(), c.merchant_control_key).ok).toBe(true)
  })
})

describe("callbackControl", () => {
  const values = { status: "approved", orderid: "1234567", client_orderid: "hf-abc" }

  it("reproduces the published callback example", () => {
    expect(callbackControl(values, "test-merchant-control")).toBe("652ace404c4dfe8bba069ecee594ec23a89340e1")
  })

  it("orders status, orderid, client_orderid (swapping changes the digest)", () => {
    expect(callbackControl({ ...values, orderid: "hf-abc", client_orderid: "1234567" }, "test-merchant-control"))
      .not.toBe("652ace404c4dfe8bba069ecee594ec23a89340e1")
  })

  it("refuses a missing field instead of hashing the text 'undefined'", () => {
    const partial = { status: "approved", orderid: "1234567" } as unknown as typeof values
    expect(() => callbackControl(partial, "k")).toThrow(expect.objectContaining({ _tag: "InvalidRequestError", field: "client_orderid" }))
    expect(() => verifyCallbackControl(partial, "00", "k")).toThrow(InvalidRequestError)
  })

  it("rejects a forged or tampered callback", () => {
    const forged = verifyCallbackControl({ ...values, status: "declined" }, "652ace404c4dfe8bba069ecee594ec23a89340e1", "test-merchant-control")
    expect(forged.ok).toBe(false)
    if (!forged.ok) {
      expect(forged.reason).toBe("mismatch")
      expect(forged.error).toBeInstanceOf(ControlVerificationError)
    }
    const missing = verifyCallbackControl(values, undefined, "test-merchant-control")
    expect(missing.ok ? "ok" : missing.reason).toBe("missing")
  })
})
