import { callbackControl } from "@paykit/signing"
import { describe, expect, it } from "vitest"
import { createPayClient, memoryCallbackStore } from "../src/index"
import { merchant } from "./support/fixtures"
import { statusOk, stubFetch } from "./support/stub"

function signed(values: Record<string, string>, key = merchant.controlKey): URLSearchParams {
  const p = new URLSearchParams(values)
  p.set("control", callbackControl({ status: values["status"]!, orderid: values["orderid"]!, client_orderid: values["client_orderid"]! }, key))
  return p
}

const base = { status: "approved", orderid: "123", merchant_order: "c-1", client_orderid: "c-1", type: "sale", amount: "10.00", currency: "USD" }
const get = (p: URLSearchParams) => new Request(`https://shop.example.com/cb?${p.toString()}`)

describe("callbacks", () => {
  const stub = stubFetch([])
  const pay = createPayClient({ baseUrl: "http://gw.test", ...merchant, fetch: stub.fetch })

  it("verifyCallback accepts URLSearchParams, URL, GET and POST requests", async () => {
    const p = signed(base)
    expect(await pay.verifyCallback(p)).toMatchObject({ status: "approved", orderid: "123" })
    expect(await pay.callbacks.verify(new URL(`https://x/cb?${p}`))).toMatchObject({ client_orderid: "c-1" })
    expect(await pay.verifyCallback(get(p))).toMatchObject({ amount: "10.00" })
    const post = new Request("https://x/return", { method: "POST", body: p, headers: { "Content-Type": "application/x-www-form-urlencoded" } })
    expect(await pay.verifyCallback(post)).toMatchObject({ type: "sale" })
    const upper = new URLSearchParams(p)
    upper.set("control", p.get("control")!.toUpperCase())
    expect(await pay.verifyCallback(upper)).toMatchObject({ status: "approved" })
  })

  it("refuses a signed callback with a field appended twice (parameter pollution) or a merchant_order that is not the signed client_orderid", async () => {
    const declined = signed({ ...base, status: "declined" })
    for (const [name, value] of [["status", "approved"], ["client_orderid", "victim"], ["orderid", "999"], ["amount", "1.00"]] as const) {
      const polluted = new URLSearchParams(declined)
      polluted.append(name, value)
      await expect(pay.verifyCallback(polluted)).rejects.toMatchObject({ _tag: "CallbackSignatureError", reason: "invalid-fields", issue: `${name}: sent more than once` })
    }
    const swapped = new URLSearchParams(declined)
    swapped.set("merchant_order", "victim")
    await expect(pay.verifyCallback(swapped)).rejects.toMatchObject({ reason: "invalid-fields" })
    const seen: Array<string> = []
    const handler = pay.callbackHandler({ onCallback: (cb) => void seen.push(cb.status) })
    const polluted = new URLSearchParams(declined)
    polluted.append("status", "approved")
    expect((await handler(get(polluted))).status).toBe(403)
    expect(seen).toEqual([])
  })

  it("refuses forged, missing and malformed controls and undecodable callbacks", async () => {
    const forged = signed({ ...base }, "wrong-key")
    await expect(pay.verifyCallback(forged)).rejects.toMatchObject({ _tag: "CallbackSignatureError", reason: "mismatch" })
    const tampered = signed(base)
    tampered.set("status", "declined")
    await expect(pay.verifyCallback(tampered)).rejects.toMatchObject({ reason: "mismatch" })
    const missing = new URLSearchParams(base)
    await expect(pay.verifyCallback(missing)).rejects.toMatchObject({ reason: "missing" })
    const malformed = new URLSearchParams({ ...base, control: "xyz" })
    await expect(pay.verifyCallback(malformed)).rejects.toMatchObject({ reason: "malformed" })
    await expect(pay.verifyCallback(new URLSearchParams({ status: "approved" }))).rejects.toMatchObject({ reason: "invalid-fields" })
    const badAmount = signed({ ...base, amount: "ten" })
    await expect(pay.verifyCallback(badAmount)).rejects.toMatchObject({ reason: "invalid-fields" })
  })

  it("handler: 200 and hand-off once, 200 on duplicates, 403 on forgeries, 500 when user code fails", async () => {
    const seen: Array<string> = []
    let fail = true
    const handler = pay.callbackHandler({
      onCallback: async (cb) => {
        if (fail) {
          fail = false
          throw new Error("db down")
        }
        seen.push(cb.client_orderid)
      }
    })
    const p = signed(base)
    expect((await handler(get(p))).status).toBe(500)
    expect((await handler(get(p))).status).toBe(200)
    expect((await handler(get(p))).status).toBe(200)
    expect(seen).toEqual(["c-1"])
    // a different status of the same order is a different event
    expect((await handler(get(signed({ ...base, status: "declined" })))).status).toBe(200)
    expect(seen).toEqual(["c-1", "c-1"])
    expect((await handler(get(signed(base, "wrong-key")))).status).toBe(403)
    expect(seen).toHaveLength(2)
  })

  it("handler: confirmByStatus trusts a callback only when status agrees", async () => {
    const s = stubFetch([statusOk("processing"), statusOk("approved")])
    const client = createPayClient({ baseUrl: "http://gw.test", ...merchant, fetch: s.fetch })
    const seen: Array<string> = []
    const store = memoryCallbackStore()
    const handler = client.callbackHandler({ onCallback: (cb) => void seen.push(cb.status), store, confirmByStatus: true })
    const p = signed(base)
    expect((await handler(get(p))).status).toBe(500)
    expect((await handler(get(p))).status).toBe(200)
    expect(seen).toEqual(["approved"])
    expect(s.sent.every((x) => x.form.get("orderid") === "123")).toBe(true)
  })
})
