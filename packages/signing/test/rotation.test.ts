import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  callbackControl,
  controlKeyList,
  ControlVerificationError,
  InvalidRequestError,
  signingKey,
  verifyCallbackControl,
  verifyCallbackControlWithKeys,
  verifyCallbackControlWithKeysAsync
} from "../src/index"

const values = { status: "approved", orderid: "1234567", client_orderid: "hf-abc" }
const OLD = "test-merchant-control"
const NEW = "new-merchant-control"
const OTHER = "someone-elses-control"

describe("verifyCallbackControlWithKeys", () => {
  it("accepts the old and the new key during a rotation, by index, and refuses a third key naming none", () => {
    const keys = [NEW, OLD]
    expect(verifyCallbackControlWithKeys(values, callbackControl(values, NEW), keys)).toEqual({ ok: true, keyIndex: 0 })
    expect(verifyCallbackControlWithKeys(values, callbackControl(values, OLD), keys)).toEqual({ ok: true, keyIndex: 1 })
    const third = verifyCallbackControlWithKeys(values, callbackControl(values, OTHER), keys)
    expect(third.ok).toBe(false)
    if (!third.ok) {
      expect(third.reason).toBe("mismatch")
      expect(third.error).toBeInstanceOf(ControlVerificationError)
      const told = JSON.stringify(third) + third.error.message + String(third.error.stack)
      for (const key of [NEW, OLD, OTHER]) expect(told).not.toContain(key)
    }
  })

  it("takes one key as the single-key API does, and accepts either hex case", () => {
    const control = callbackControl(values, OLD)
    expect(verifyCallbackControlWithKeys(values, control, OLD)).toEqual({ ok: true, keyIndex: 0 })
    expect(verifyCallbackControlWithKeys(values, control.toUpperCase(), [NEW, OLD])).toEqual({ ok: true, keyIndex: 1 })
    expect(verifyCallbackControl(values, control, OLD).ok).toBe(true)
  })

  it("reports a missing or malformed control as such, whatever the keys", () => {
    const missing = verifyCallbackControlWithKeys(values, undefined, [NEW, OLD])
    expect(missing.ok ? "ok" : missing.reason).toBe("missing")
    const malformed = verifyCallbackControlWithKeys(values, "zz", [NEW, OLD])
    expect(malformed.ok ? "ok" : malformed.reason).toBe("malformed")
  })

  it("refuses an empty list or an empty key, naming the position and not a key", () => {
    expect(() => verifyCallbackControlWithKeys(values, "00", [])).toThrow(InvalidRequestError)
    expect(() => controlKeyList([NEW, ""])).toThrow(expect.objectContaining({ field: "key[1]", rule: "missing" }))
    expect(() => controlKeyList("")).toThrow(expect.objectContaining({ field: "key" }))
    expect(() => verifyCallbackControlWithKeys({ status: "approved", orderid: "1" } as typeof values, "00", [NEW])).toThrow(
      expect.objectContaining({ field: "client_orderid" })
    )
  })

  it("signs with the first key", () => {
    expect(signingKey([NEW, OLD])).toBe(NEW)
    expect(signingKey(OLD)).toBe(OLD)
  })
})

describe("rotation properties", () => {
  const key = fc.string({ minLength: 1, maxLength: 24 })
  const field = fc.string({ maxLength: 16 })
  const callback = fc.record({ status: field, orderid: field, client_orderid: field })

  it("a control made with the listed key at index i verifies with keyIndex = the first index holding that key", () => {
    fc.assert(
      fc.property(callback, fc.array(key, { minLength: 1, maxLength: 5 }), fc.nat(), (v, keys, pick) => {
        const i = pick % keys.length
        const result = verifyCallbackControlWithKeys(v, callbackControl(v, keys[i] as string), keys)
        expect(result.ok).toBe(true)
        if (result.ok) {
          expect(keys[result.keyIndex]).toBe(keys[i])
          expect(result.keyIndex).toBe(keys.indexOf(keys[i] as string))
        }
      })
    )
  })

  it("a control made with a key not listed is a mismatch, and agrees with the single-key check of each key", () => {
    fc.assert(
      fc.property(callback, fc.uniqueArray(key, { minLength: 2, maxLength: 5 }), (v, all) => {
        const [outsider, ...keys] = all as [string, ...string[]]
        const control = callbackControl(v, outsider)
        const result = verifyCallbackControlWithKeys(v, control, keys)
        expect(result.ok ? "ok" : result.reason).toBe("mismatch")
        for (const k of keys) expect(verifyCallbackControl(v, control, k).ok).toBe(false)
      })
    )
  })
})

describe("verifyCallbackControlWithKeysAsync", () => {
  it.each(["node", "webcrypto"] as const)("gives the synchronous results on %s", async (crypto) => {
    const keys = [NEW, OLD]
    for (const key of [NEW, OLD, OTHER]) {
      const control = callbackControl(values, key)
      const sync = verifyCallbackControlWithKeys(values, control, keys)
      const async = await verifyCallbackControlWithKeysAsync(values, control, keys, { crypto })
      expect(async.ok ? { ok: true, keyIndex: async.keyIndex } : async.reason).toEqual(sync.ok ? { ok: true, keyIndex: sync.keyIndex } : sync.reason)
    }
    const missing = await verifyCallbackControlWithKeysAsync(values, undefined, keys, { crypto })
    expect(missing.ok ? "ok" : missing.reason).toBe("missing")
    await expect(verifyCallbackControlWithKeysAsync(values, "00", [], { crypto })).rejects.toBeInstanceOf(InvalidRequestError)
  })
})
