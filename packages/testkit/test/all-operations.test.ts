import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { operationIds, operations, type OperationId } from "@paykit/contracts"
import { createSimulator, requests, requestsByOperation, testMerchant, type Simulator } from "../src/index"
import { callbackReceiver, expectError, signedRequest } from "./helpers"

let sim: Simulator
beforeEach(() => {
  sim = createSimulator({ callbackFetch: callbackReceiver().fetch })
})
// No test may break a ledger invariant, at any point (a violation is a simulator bug).
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

/** Fields that make each operation's happy path, creating the orders it refers to. */
async function happyFields(op: OperationId): Promise<Record<string, string>> {
  const finished = async (kind: "SALE" | "PREAUTH" | "THREEDS" | "CHECK") => {
    const fields = kind === "CHECK" ? requests.payoutCheck() : kind === "PREAUTH" ? requests.preauth() : requests.sale(kind === "THREEDS" ? { credit_card_number: "4000000000003220" } : {})
    const reply = await signedRequest(sim, kind === "CHECK" ? "PAYOUT_V4_CHECK" : kind === "PREAUTH" ? "PREAUTH" : "SALE", fields)
    if (kind !== "THREEDS") await sim.clock.advance(2000)
    return { orderid: String(reply.body["paynet-order-id"]), client_orderid: fields.client_orderid }
  }
  const ref = async () => {
    const ids = await finished("SALE")
    return String((await signedRequest(sim, "CARDREF", requests.createCardRef(ids))).body["card-ref-id"])
  }
  const recurring = async () => String((await signedRequest(sim, "CREATE_RP_V4", requests.createRecurringPayment())).body["recurring-payment-id"])
  switch (op) {
    case "PROCESS_RP_V4": return requests.processRecurringPayment({ "recurring-payment-id": await recurring() })
    case "UPDATE_RP_V4": return requests.updateRecurringPayment({ "recurring-payment-id": await recurring() })
    case "CAPTURE": return requests.capture(await finished("PREAUTH"))
    case "VOID": return requests.void(await finished("SALE"))
    case "RETURN": return requests.return(await finished("SALE"))
    case "STATUS": return requests.status(await finished("SALE"))
    case "CARDREF": return requests.createCardRef(await finished("SALE"))
    case "CARDREF_V4": return requests.createCardRefV4(await finished("SALE"))
    case "CARDINFO": return requests.getCardInfo({ cardrefid: await ref() })
    case "REBILL": return requests.makeRebill({ cardrefid: await ref() })
    case "TRANSFER_BY_REF_V4": return requests.transferByRef({ "source-card-ref-id": await ref() })
    case "PAYOUT_V4_PAY": return requests.payoutPay(await finished("CHECK"))
    case "TDS_UPLOAD_METHOD_URL_RESULT":
    case "TDS_UPLOAD_PARES_RESULT": {
      const ids = await finished("THREEDS")
      return requestsByOperation[op]({ orderid: ids.orderid, "client-order-id": ids.client_orderid })
    }
    case "TDS_UPLOAD_CRES_RESULT": {
      const ids = await finished("THREEDS")
      const three = { orderid: ids.orderid, "client-order-id": ids.client_orderid }
      await signedRequest(sim, "TDS_UPLOAD_METHOD_URL_RESULT", requests.uploadMethodUrlResult(three))
      return requests.uploadCresResult(three)
    }
    default: return requestsByOperation[op]()
  }
}

describe("every operation of the spec", () => {
  it("has a builder for each operation of the spec", () => {
    for (const id of operationIds) expect(typeof requestsByOperation[id]).toBe("function")
    expect(Object.keys(requests).sort()).toEqual(operationIds.map((id) => operations[id].method).sort())
  })

  it.each(operationIds.map((id) => [id]))("%s: happy path answers 200 with its response Schema", async (op) => {
    const reply = await signedRequest(sim, op, await happyFields(op))
    expect(reply.status).toBe(200)
  })

  it.each(operationIds.map((id) => [id]))("%s: a missing required field → invalid-field", async (op) => {
    const fields = await happyFields(op)
    const firstRequired = Object.keys(fields).find((name) => name !== "login")!
    const { [firstRequired]: _gone, ...rest } = fields
    const reply = await signedRequest(sim, op, rest, { unsigned: true, mutate: (init) => void (init.headers["authorization"] = "OAuth x") })
    expectError(reply, "invalid-field")
    expect(reply.body["error-message"]).toContain(firstRequired)
  })

  it.each(operationIds.map((id) => [id]))("%s: bad authentication → 400 with an auth error-code", async (op) => {
    const reply = await signedRequest(sim, op, await happyFields(op), { controlKey: "not-the-key", login: testMerchant.login, mutate: (init) => {
      if (init.headers["authorization"] !== undefined) init.headers["authorization"] = init.headers["authorization"].replace(/oauth_signature="[^"]+"/, 'oauth_signature="AAAA"')
    } })
    expect(reply.status).toBe(400)
    expect(["control-mismatch", "oauth-bad-signature"]).toContain(reply.body["error-code"])
  })
})
