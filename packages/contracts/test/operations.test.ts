import { describe, expect, it } from "vitest"
import { controlCodes, errorCodes, operationIds, operations, operationSchemas, schemas } from "../src/index"

// Transcribed independently from the interface's endpoint table (§4) and authentication table
// (§5.1), plus docs/decisions.md for what the interface leaves open.
const expected: Record<string, { path: string; method: string; auth: string; request: string; response: string }> = {
  TDS_UPLOAD_CRES_RESULT: { path: "/api/3ds/v1/upload-cres-result/{endpointId}", method: "uploadCresResult", auth: "C1", request: "TdsCResResultRequest", response: "AsyncResponse" },
  TDS_UPLOAD_METHOD_URL_RESULT: { path: "/api/3ds/v1/upload-method-url-result/{endpointId}", method: "uploadMethodUrlResult", auth: "C1", request: "TdsMethodUrlResultRequest", response: "AsyncResponse" },
  TDS_UPLOAD_PARES_RESULT: { path: "/api/3ds/v1/upload-pares-result/{endpointId}", method: "uploadParesResult", auth: "C1", request: "TdsPaResResultRequest", response: "AsyncResponse" },
  ACCOUNT_VERIFICATION_FORM: { path: "/api/v2/account-verification-form/{endpointId}", method: "accountVerificationForm", auth: "C2", request: "AccountVerificationFormRequest", response: "AsyncCheckoutFormRedirect" },
  ACCOUNT_VERIFICATION: { path: "/api/v2/account-verification/{endpointId}", method: "accountVerification", auth: "C2", request: "AccountVerificationRequest", response: "AsyncResponse" },
  CAPTURE: { path: "/api/v2/capture/{endpointId}", method: "capture", auth: "C4", request: "CaptureRequest", response: "AsyncResponse" },
  CARDREF: { path: "/api/v2/create-card-ref/{endpointId}", method: "createCardRef", auth: "C3", request: "CreateCardRefRequest", response: "CardRefAsyncResponse" },
  CARDINFO: { path: "/api/v2/get-card-info/{endpointId}", method: "getCardInfo", auth: "C8", request: "GetCardInfoRequest", response: "CardInfoAsyncResponse" },
  REBILL: { path: "/api/v2/make-rebill/{endpointId}", method: "makeRebill", auth: "C5", request: "RebillRequest", response: "AsyncResponse" },
  PAYMENTFORM: { path: "/api/v2/payment-form/{endpointId}", method: "paymentForm", auth: "C6", request: "PaymentFormRequest", response: "AsyncCheckoutFormRedirect" },
  PAYOUTFORM: { path: "/api/v2/payout-form/{endpointId}", method: "payoutForm", auth: "oauth-hmac-sha1", request: "PayoutFormRequest", response: "AsyncCheckoutFormRedirect" },
  PAYOUT: { path: "/api/v2/payout/{endpointId}", method: "payout", auth: "oauth-hmac-sha1", request: "PayoutRequest", response: "AsyncResponse" },
  PREAUTHFORM: { path: "/api/v2/preauth-form/{endpointId}", method: "preauthForm", auth: "C6", request: "AuthFormRequest", response: "AsyncCheckoutFormRedirect" },
  PREAUTH: { path: "/api/v2/preauth/{endpointId}", method: "preauth", auth: "C6", request: "AuthRequest", response: "AsyncResponse" },
  RETURN: { path: "/api/v2/return/{endpointId}", method: "return", auth: "C4", request: "ReturnRequest", response: "AsyncResponse" },
  SALEFORM: { path: "/api/v2/sale-form/{endpointId}", method: "saleForm", auth: "C6", request: "SaleFormRequest", response: "AsyncCheckoutFormRedirect" },
  SALE: { path: "/api/v2/sale/{endpointId}", method: "sale", auth: "C6", request: "SaleRequest", response: "AsyncResponse" },
  STATUS: { path: "/api/v2/status/{endpointId}", method: "status", auth: "C7", request: "StatusRequest", response: "StatusResponse" },
  VOID: { path: "/api/v2/void/{endpointId}", method: "void", auth: "C3", request: "VoidRequest", response: "AsyncResponse" },
  CARDREF_V4: { path: "/api/v4/create-card-ref/{endpointId}", method: "createCardRefV4", auth: "oauth-rsa-sha256", request: "CreateCardRefV4Request", response: "CardRefV4AsyncResponse" },
  CREATE_RP_V4: { path: "/api/v4/create-recurring-payment/{endpointId}", method: "createRecurringPayment", auth: "oauth-rsa-sha256", request: "RecurringPaymentForCreation", response: "CreateRecurringPaymentResponse" },
  PAYOUT_V4_CHECK: { path: "/api/v4/payout-check/{endpointId}", method: "payoutCheck", auth: "oauth-rsa-sha256", request: "PayoutCheckRequest", response: "AsyncResponse" },
  PAYOUT_V4_PAY: { path: "/api/v4/payout-pay/{endpointId}", method: "payoutPay", auth: "oauth-rsa-sha256", request: "PayoutPayRequest", response: "AsyncResponse" },
  TRANSFER_V4: { path: "/api/v4/transfer/{endpointId}", method: "transfer", auth: "oauth-rsa-sha256", request: "TransferRequest", response: "AsyncResponse" },
  TRANSFER_BY_REF_V4: { path: "/api/v4/transfer-by-ref/{endpointId}", method: "transferByRef", auth: "oauth-rsa-sha256", request: "TransferByRefRequest", response: "AsyncResponse" },
  PAN_ELIGIBILITY_SEND: { path: "/api/v2/pan-eligibility/send/{endpointId}", method: "panEligibilitySend", auth: "oauth-hmac-sha1", request: "PanEligibilitySendRequest", response: "AsyncResponse" },
  // Beyond the interface's table: the gateway's recurring process and update (docs/decisions.md#13-recurring-payments).
  PROCESS_RP_V4: { path: "/api/v4/process-recurring-payment/{endpointId}", method: "processRecurringPayment", auth: "oauth-rsa-sha256", request: "ProcessRecurringPaymentRequest", response: "ProcessRecurringPaymentResponse" },
  UPDATE_RP_V4: { path: "/api/v4/update-recurring-payment/{endpointId}", method: "updateRecurringPayment", auth: "oauth-rsa-sha256", request: "UpdateRecurringPaymentRequest", response: "UpdateRecurringPaymentResponse" }
}

const expectedFields: Record<string, ReadonlyArray<string>> = {
  C1: ["login", "client-order-id", "orderid"],
  C2: ["endpointId", "client_orderid", "email"],
  C3: ["login", "client_orderid", "orderid"],
  C4: ["login", "client_orderid", "orderid", "amount", "currency"],
  C5: ["login", "client_orderid", "cardrefid", "amount", "currency"],
  C6: ["endpointId", "client_orderid", "amount", "email"],
  C7: ["login", "client_orderid", "orderid"],
  C8: ["login", "cardrefid"]
}

describe("operation table", () => {
  it("has the 26 operations of the interface and the 2 recurring ones of docs/decisions.md#13-recurring-payments", () => {
    expect([...operationIds].sort()).toEqual(Object.keys(expected).sort())
  })

  it.each(Object.entries(expected))("%s matches the interface's table or a decision of docs/decisions.md", (id, want) => {
    const op = operations[id as keyof typeof operations]
    expect(op.path).toBe(want.path)
    expect(op.method).toBe(want.method)
    expect(op.request).toBe(want.request)
    expect(op.response).toBe(want.response)
    if (want.auth.startsWith("C")) {
      expect(op.auth).toEqual({ scheme: "control", code: want.auth, fields: expectedFields[want.auth] })
    } else {
      expect(op.auth).toEqual({ scheme: want.auth })
    }
    expect(operationSchemas[id as keyof typeof operationSchemas].request).toBe(schemas[want.request as keyof typeof schemas])
  })

  it("derives control codes C1–C8 with their operations", () => {
    expect(Object.keys(controlCodes)).toEqual(["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"])
    for (const [code, { fields }] of Object.entries(controlCodes)) expect(fields).toEqual(expectedFields[code])
    expect(controlCodes.C6.operations).toEqual(expect.arrayContaining(["SALE", "PREAUTH", "SALEFORM", "PREAUTHFORM", "PAYMENTFORM"]))
  })

  it("reads status, card info and eligibility; reconciles everything else", () => {
    const reads = operationIds.filter((id) => operations[id].retry === "read")
    // UPDATE_RP_V4 sets values and opens no order: resending it is safe (docs/decisions.md#d13u-update-a-recurring-payment).
    expect(reads.sort()).toEqual(["CARDINFO", "PAN_ELIGIBILITY_SEND", "STATUS", "UPDATE_RP_V4"])
  })

  it("classifies every error-code", () => {
    expect(errorCodes["control-mismatch"].category).toBe("auth")
    expect(errorCodes["capture-exceeds-authorized"].category).toBe("lifecycle")
    expect(errorCodes["internal-error"].category).toBe("server")
  })
})
