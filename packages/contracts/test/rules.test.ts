import { existsSync, readFileSync } from "node:fs"
import { Either, Schema } from "effect"
import { describe, expect, expectTypeOf, it } from "vitest"
import { parse } from "yaml"
import { examplesPath, refreshSpec } from "../scripts/refresh-spec"
import { specPath } from "../scripts/generator"
import { crossFieldIssues, crossFieldRules, ErrorCode, errorCodes, operations, schemas, type ErrorCode as TableErrorCode } from "../src/index"

const spec = parse(readFileSync(specPath, "utf8"))
const issuesOf = (name: keyof typeof schemas, value: unknown) => {
  const result = Schema.decodeUnknownEither(schemas[name] as Schema.Schema<unknown, unknown, never>)(value)
  return Either.isLeft(result) ? String(result.left) : undefined
}

describe("error codes", () => {
  it("ErrorCode's enum is the table's codes, in table order", () => {
    expect(spec.components.schemas.ErrorCode.enum).toEqual(spec.info["x-paykit-error-codes"].codes.map((c: { code: string }) => c.code))
    expect(ErrorCode.literals).toEqual(Object.keys(errorCodes))
  })

  it("the generated error-code type is a union of literals, the same as the table's", () => {
    expectTypeOf<Schema.Schema.Type<typeof ErrorCode>>().toEqualTypeOf<TableErrorCode>()
    expectTypeOf<"control-mismatch">().toMatchTypeOf<TableErrorCode>()
    expectTypeOf<string>().not.toMatchTypeOf<TableErrorCode>()
  })

  it("a 400 reply's error-code is a table code or the real gateway's positive number, nothing else", () => {
    const reply = { type: "validation-error", "serial-number": "1", "error-message": "m" }
    expect(issuesOf("ValidationErrorResponse", { ...reply, "error-code": "control-mismatch" })).toBeUndefined()
    expect(issuesOf("ValidationErrorResponse", { ...reply, "error-code": 1 })).toBeUndefined()
    expect(issuesOf("ValidationErrorResponse", { ...reply, "error-code": "made-up" })).toBeDefined()
    expect(issuesOf("ValidationErrorResponse", { ...reply, "error-code": -32234484 })).toBeDefined()
  })
})

describe("cross-field rules stated in JSON Schema, generated into the Effect Schemas", () => {
  it("has rules for the schemas that need them (aliases share them)", () => {
    expect(Object.keys(crossFieldRules).sort()).toEqual([
      "CaptureRequest", "PanEligibilitySendRequest", "PayoutCheckRequest", "PayoutRequest", "RecurringPaymentForCreation",
      "ReturnRequest", "TransferByRefRequest", "TransferRequest", "VoidRequest"
    ])
    expect(crossFieldRules["CaptureRequest"]!.errorCode).toBe("currency-mismatch")
    expect(crossFieldRules["PayoutCheckRequest"]).toBe(crossFieldRules["PayoutRequest"])
    expect(crossFieldRules["PayoutRequest"]!.errorCode).toBe("payout-destination")
  })

  const capture = { login: "m", client_orderid: "c", orderid: "12", control: "a".repeat(40) }
  it("capture, return, void: amount and currency together or neither, naming the missing field", () => {
    for (const name of ["CaptureRequest", "ReturnRequest", "VoidRequest"] as const) {
      expect(issuesOf(name, capture)).toBeUndefined()
      expect(issuesOf(name, { ...capture, amount: "1.00", currency: "USD" })).toBeUndefined()
      expect(issuesOf(name, { ...capture, amount: "1.00" })).toMatch(/\["currency"\][\s\S]*required when amount is present/)
      expect(issuesOf(name, { ...capture, currency: "USD" })).toMatch(/\["amount"\]/)
    }
  })

  it("payout: exactly one destination", () => {
    const payout = { client_orderid: "p", amount: "1.00", currency: "USD" }
    expect(issuesOf("PayoutRequest", { ...payout, account_number: "12345678" })).toBeUndefined()
    expect(issuesOf("PayoutRequest", payout)).toMatch(/exactly one of credit_card_number, destination-card-ref-id, account_number, destination_phone, wallet_id is required \(got 0: none was given\)/)
    expect(issuesOf("PayoutRequest", { ...payout, wallet_id: "w-1" })).toBeUndefined()
    expect(issuesOf("PayoutRequest", { ...payout, wallet_id: "w-1", credit_card_number: "4111111111111111" })).toMatch(/got 2/)
    expect(issuesOf("PayoutCheckRequest", { ...payout, account_number: "12345678", destination_phone: "+49 30 1234" })).toMatch(/got 2/)
  })

  it("recurring: period and interval both or neither; transfers and eligibility: their card alternatives", () => {
    expect(crossFieldIssues(crossFieldRules["RecurringPaymentForCreation"]!, { period: "month" })).toEqual([{ path: ["interval"], message: "is required when period is present (period and interval travel together)" }])
    expect(crossFieldIssues(crossFieldRules["RecurringPaymentForCreation"]!, { period: "month", interval: "1" })).toEqual([])
    expect(crossFieldIssues(crossFieldRules["TransferByRefRequest"]!, { "destination-card-no": "4111111111111111", "destination-card-ref-id": "R1" })).toHaveLength(1)
    expect(crossFieldIssues(crossFieldRules["PanEligibilitySendRequest"]!, {})).toHaveLength(1)
    expect(crossFieldIssues(crossFieldRules["TransferRequest"]!, { credit_card_number: "4111111111111111" })).toEqual([
      { path: ["destination-card-no"], message: "at least one of destination-card-no, destination_card_recurring_payment_id is required (got 0: none was given)" }
    ])
  })

  it("a rule's message never quotes a value (card numbers stay out of errors)", () => {
    const text = issuesOf("TransferByRefRequest", { "client-order-id": "t", amount: "1.00", currency: "USD", order_desc: "d", "destination-card-no": "4111111111111111", "destination-card-ref-id": "R1" })
    expect(text).toBeDefined()
    expect(text).not.toContain("4111111111111111")
  })
})

describe("the mechanical part of the spec (pnpm spec:refresh)", () => {
  it("is up to date: re-running the refresh changes nothing", () => {
    const text = readFileSync(specPath, "utf8")
    const captured = existsSync(examplesPath) ? JSON.parse(readFileSync(examplesPath, "utf8")) : undefined
    const { changes } = refreshSpec(text, captured)
    expect(changes, "run pnpm spec:refresh").toEqual([])
  })

  it("every operation has a description, x-paykit-accept and a camelCase x-paykit-method; operationIds stay the interface's", () => {
    for (const op of Object.values(operations)) {
      expect(op.accept).toBe("application/vnd.pay+json")
      expect(op.method).toMatch(/^[a-z][A-Za-z0-9]*$/)
      expect(op.operationId).toMatch(/^[A-Z0-9_]+$/)
    }
    for (const item of Object.values<Record<string, { description?: string }>>(spec.paths)) {
      for (const op of Object.values(item)) expect(op.description?.length ?? 0).toBeGreaterThan(40)
    }
  })
})
