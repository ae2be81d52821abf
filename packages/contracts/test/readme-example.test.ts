import { Schema } from "effect"
import { expect, it } from "vitest"
import { CaptureRequest, crossFieldRules, operations, SaleRequest, StatusResponse } from "../src/index"

// The README's example, kept honest.
it("runs the README example", () => {
  expect(operations.SALE.path).toBe("/api/v2/sale/{endpointId}")
  expect(operations.SALE.auth.fields).toEqual(["endpointId", "client_orderid", "amount", "email"])
  const status = Schema.decodeUnknownSync(StatusResponse)({
    type: "status-response", status: "approved", "serial-number": "a1",
    "merchant-order-id": "order-1", "paynet-order-id": "1000001"
  })
  expect(status.status).toBe("approved")
  const bad = Schema.decodeUnknownEither(SaleRequest)({ credit_card_number: "4111" })
  expect(bad._tag).toBe("Left")
  if (bad._tag === "Left") expect(String(bad.left)).not.toContain("4111")
  const capture = Schema.decodeUnknownEither(CaptureRequest)({
    login: "merchant", client_orderid: "order-1", orderid: "1000001", amount: "5.00", control: "a".repeat(40)
  })
  expect(capture._tag).toBe("Left")
  if (capture._tag === "Left") expect(String(capture.left)).toMatch(/\["currency"\][\s\S]*required when amount is present/)
  expect(crossFieldRules["CaptureRequest"]?.errorCode).toBe("currency-mismatch")
})
