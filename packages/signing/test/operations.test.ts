import { operations, type OperationId } from "@paykit/contracts/operations"
import { describe, expect, it } from "vitest"
import { controlDigest, controlSchemeOf, NotControlSignedError, signControl, verifyOperationControl } from "../src/index"
import { controlVectors } from "./vectors"

// The vectors name operations by path segment; the table by operationId.
const VECTOR_OPERATION: Readonly<Record<string, OperationId>> = {
  "tds-cres": "TDS_UPLOAD_CRES_RESULT",
  "tds-method-url": "TDS_UPLOAD_METHOD_URL_RESULT",
  "tds-pares": "TDS_UPLOAD_PARES_RESULT",
  "account-verification": "ACCOUNT_VERIFICATION",
  "account-verification-form": "ACCOUNT_VERIFICATION_FORM",
  "create-card-ref": "CARDREF",
  void: "VOID",
  capture: "CAPTURE",
  return: "RETURN",
  "make-rebill": "REBILL",
  sale: "SALE",
  "sale-form": "SALEFORM",
  preauth: "PREAUTH",
  "preauth-form": "PREAUTHFORM",
  status: "STATUS",
  "get-card-info": "CARDINFO"
}

const ids = Object.keys(operations) as Array<OperationId>
const controlIds = ids.filter((id) => operations[id].auth.scheme === "control")

describe("operation table ↔ vectors", () => {
  it("every control operation's code and field list equal the vectors' fields table", () => {
    expect(controlIds.length).toBeGreaterThanOrEqual(16)
    for (const id of controlIds) {
      const auth = controlSchemeOf(id)
      expect([id, auth.fields]).toEqual([id, controlVectors.fields[auth.code]?.values])
    }
  })

  it("every operation the vectors name is control-signed with the vectors' code", () => {
    for (const [code, row] of Object.entries(controlVectors.fields)) {
      for (const op of row.operations) {
        const id = VECTOR_OPERATION[op]
        expect(id, op).toBeDefined()
        expect([op, controlSchemeOf(id as OperationId).code]).toEqual([op, code])
      }
    }
  })
})

describe("signControl / verifyOperationControl", () => {
  it.each(controlVectors.cases.filter((c) => c.error === undefined).map((c) => [c.id, c] as const))("%s via the table", (_id, c) => {
    const id = VECTOR_OPERATION[c.operation] as OperationId
    const body = c.currency === null ? c.values : { ...c.values, currency: c.currency }
    const options = {
      key: c.merchant_control_key,
      ...(c.values["endpointId"] === undefined ? {} : { endpointId: c.values["endpointId"] }),
      ...(c.minor_units === undefined ? {} : { minorUnits: c.minor_units })
    }
    expect(signControl(id, body, options)).toBe(c.control)
    expect(verifyOperationControl(id, { ...body, control: c.control?.toUpperCase() }, options).ok).toBe(true)
    const bad = verifyOperationControl(id, { ...body, control: "0".repeat(40) }, options)
    expect(bad.ok ? "ok" : bad.reason).toBe("mismatch")
  })

  it("reproduces the published sale example through SALE and its group-id twin PAYMENTFORM (C6)", () => {
    const body = { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" }
    const options = { key: "B17F59B4-A7DC-41B4-8FF9-37D986B43D20", endpointId: 1111 }
    expect(signControl("SALE", body, options)).toBe("c6bdd88a78834ef4b863b088827a459f039e8257")
    expect(signControl("PAYMENTFORM", body, options)).toBe("c6bdd88a78834ef4b863b088827a459f039e8257")
  })

  it("reports a missing control", () => {
    const result = verifyOperationControl("STATUS", { login: "l", client_orderid: "c" }, { key: "k" })
    expect(result.ok ? "ok" : result.reason).toBe("missing")
  })

  it("throws NotControlSignedError for OAuth operations and unknown ids", () => {
    for (const id of ids.filter((i) => operations[i].auth.scheme !== "control")) {
      expect(() => signControl(id, {}, { key: "k" })).toThrow(NotControlSignedError)
      try {
        verifyOperationControl(id, {}, { key: "k" })
      } catch (error) {
        expect(error).toMatchObject({ _tag: "NotControlSignedError", operationId: id, scheme: operations[id].auth.scheme })
      }
    }
    expect(() => signControl("NOPE" as OperationId, {}, { key: "k" })).toThrow(expect.objectContaining({ _tag: "NotControlSignedError", scheme: undefined }))
    expect(() => signControl("toString" as OperationId, {}, { key: "k" })).toThrow(NotControlSignedError)
  })

  it("uses exactly the table's row (same digest as the low-level function)", () => {
    const body = { login: "l", client_orderid: "c", orderid: "o", amount: "1.5", currency: "KWD" }
    expect(signControl("CAPTURE", body, { key: "k" })).toBe(controlDigest(operations.CAPTURE.auth, body, "k"))
  })
})
