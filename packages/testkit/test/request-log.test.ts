/**
 * The request log (issue 16, item 2): one record per request, one line each, never card data or
 * secrets. The bin's log, `--quiet`, `--help` and shared mode (issue 18, item 4) over a real process
 * are request-log-bin.heavy.test.ts.
 */
import { describe, expect, it } from "vitest"
import { createSimulator, formatRequestLine, requests, testMerchant, type RequestRecord } from "../src/index"
import { operationOf, safe } from "../src/http/request-log"
import { signedRequest } from "./helpers"

const PAN = "4111111111111111"
const CVV = "7391"

describe("request records", () => {
  it("one per request with operation, client_orderid, status, error code and ms; never the body", async () => {
    const records: RequestRecord[] = []
    const sim = createSimulator({ processingDelayMs: 0, onRequest: (r) => records.push(r) })
    const fields = requests.sale({ credit_card_number: PAN, cvv2: CVV })
    await signedRequest(sim, "SALE", fields)
    await signedRequest(sim, "SALE", requests.sale({ client_orderid: "bad-1" }), { controlKey: "wrong" })
    await sim.fetch(new Request("http://sim.test/__sim/clock"))
    expect(records).toHaveLength(3)
    expect(records[0]).toMatchObject({ method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: fields.client_orderid, status: 200 })
    expect(records[0]!.errorCode).toBeUndefined()
    expect(records[1]).toMatchObject({ operation: "SALE", clientOrderId: "bad-1", status: 400, errorCode: "control-mismatch" })
    expect(records[2]).toMatchObject({ operation: "test-route", path: "/__sim/clock", status: 200 })
    const text = JSON.stringify(records) + records.map(formatRequestLine).join("\n")
    for (const secret of [PAN, CVV, testMerchant.controlKey, "cvv2", "credit_card_number"]) expect(text).not.toContain(secret)
    await sim.close()
  })

  it("the line format, and values that could forge or leak", () => {
    const line = formatRequestLine({ at: Date.UTC(2026, 10, 23, 18, 30), method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: "A-1", status: 200, ms: 3.14 })
    expect(line).toBe("2026-11-23T18:30:00.000Z POST SALE client_orderid=A-1 200 - 3.1ms")
    const evil = formatRequestLine({ at: 0, method: "POST", path: "/api/v2/sale/1001", operation: "SALE", clientOrderId: `x\n2026-01-01T00:00:00.000Z POST SALE ${PAN}`, status: 400, errorCode: "invalid-field", ms: 1 })
    expect(evil.split("\n")).toHaveLength(1)
    expect(evil).not.toContain(PAN)
    expect(safe(PAN)).toBe("411111******1111")
    expect(safe("1234567890123")).toBe("1234567890123") // not a card number (fails Luhn): kept
    expect(operationOf("/api/v2/sale/group/2001")).toBe("SALE")
    expect(operationOf("/api/v2/payout/1001")).toBe("PAYOUT")
    expect(operationOf("/__sim/form/1000001")).toBe("page")
    expect(operationOf("/nowhere")).toBe("-")
  })
})
