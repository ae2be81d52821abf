import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { errorCodes, operations, schemas } from "../src/index"

const decode = <A, I>(schema: Schema.Schema<A, I>, value: unknown) => Schema.decodeUnknownEither(schema, { onExcessProperty: "error" })(value)

// docs/decisions.md#13-recurring-payments: the gateway's process and update calls, beyond the interface's table (docs/decisions.md#d13p-process-a-recurring-payment, docs/decisions.md#d13u-update-a-recurring-payment).
describe("recurring process and update contracts", () => {
  it("both are OAuth RSA-SHA256 v4 operations; process reconciles, update is resend-safe", () => {
    expect(operations.PROCESS_RP_V4).toMatchObject({ family: "v4", auth: { scheme: "oauth-rsa-sha256" }, retry: "reconcile" })
    expect(operations.UPDATE_RP_V4).toMatchObject({ family: "v4", auth: { scheme: "oauth-rsa-sha256" }, retry: "read" })
  })

  it("process: client-orderid and recurring-payment-id required, amount optional, no currency field", () => {
    expect(Either.isRight(decode(schemas.ProcessRecurringPaymentRequest, { "client-orderid": "c1", "recurring-payment-id": "RP0000000112ab34cd" }))).toBe(true)
    expect(Either.isRight(decode(schemas.ProcessRecurringPaymentRequest, { "client-orderid": "c1", "recurring-payment-id": "RP1", amount: "12.50" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.ProcessRecurringPaymentRequest, { "client-orderid": "c1" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.ProcessRecurringPaymentRequest, { "client-orderid": "c1", "recurring-payment-id": "RP1", currency: "USD" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.ProcessRecurringPaymentRequest, { "client-orderid": "c1", "recurring-payment-id": "RP 1" }))).toBe(true)
  })

  it("update: schedule, card and amount fields typed; a bad period or interval is refused", () => {
    const base = { "client-orderid": "c1", "recurring-payment-id": "RP1" }
    expect(Either.isRight(decode(schemas.UpdateRecurringPaymentRequest, { ...base, amount: "5.00", period: "week", interval: "2", "start-date": "2030-02-01", "finish-date": "2030-12-31" }))).toBe(true)
    expect(Either.isRight(decode(schemas.UpdateRecurringPaymentRequest, { ...base, "credit-card-number": "5555555555554444", "card-printed-name": "A B", "expire-month": "01", "expire-year": "31" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.UpdateRecurringPaymentRequest, { ...base, period: "year", interval: "1" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.UpdateRecurringPaymentRequest, { ...base, period: "day", interval: "0" }))).toBe(true)
  })

  it("replies: the gateway's response types", () => {
    expect(Either.isRight(decode(schemas.ProcessRecurringPaymentResponse, { type: "process-recurring-payment-response", status: "processing", "serial-number": "1", "paynet-order-id": 42 }))).toBe(true)
    expect(Either.isLeft(decode(schemas.ProcessRecurringPaymentResponse, { type: "async-response", status: "processing", "serial-number": "1" }))).toBe(true)
    expect(Either.isRight(decode(schemas.UpdateRecurringPaymentResponse, { type: "update-recurring-payment-response", status: "approved", "serial-number": "1", "recurring-payment-id": "RP1" }))).toBe(true)
    expect(Either.isLeft(decode(schemas.UpdateRecurringPaymentResponse, { type: "update-recurring-payment-response", status: "approved", "serial-number": "1" }))).toBe(true)
  })

  it("refusals have their own lifecycle error-codes", () => {
    expect(errorCodes["recurring-payment-not-found"].category).toBe("lifecycle")
    expect(errorCodes["recurring-payment-inactive"].category).toBe("lifecycle")
  })

  it("status types a chargeback: transaction-type chargeback and chargeback-amount (docs/decisions.md#d17c-chargebacks-in-status)", () => {
    const reply = { type: "status-response", status: "approved", "serial-number": "1", "merchant-order-id": "c1", "paynet-order-id": "7", "transaction-type": "chargeback", amount: "10.00", "chargeback-amount": "10.00" }
    const decoded = decode(schemas.StatusResponse, reply)
    expect(Either.isRight(decoded) && decoded.right["chargeback-amount"]).toBe("10.00")
    expect(Either.isLeft(decode(schemas.StatusResponse, { ...reply, "chargeback-amount": "10,00" }))).toBe(true)
  })
})
