/**
 * A merchant whose callbacks are signed with another (older) key than its requests: the
 * simulator's side of a control-key rotation test (`callbackControlKey`).
 */
import { verifyCallbackControlWithKeys } from "@paykit/signing"
import { afterEach, describe, expect, it } from "vitest"
import { createSimulator, requests, testMerchant, type MerchantConfig, type Simulator } from "../src/index"
import { callbackReceiver, expectError, signedRequest } from "./helpers"

const NEW = "9D2B7C41-6E0A-4F58-B3C2-1A7E5D9F0C64"
const OLD = testMerchant.controlKey
const CALLBACK = "https://merchant.example/callback"

const rotating: MerchantConfig = {
  login: testMerchant.login,
  controlKey: NEW,
  callbackControlKey: OLD,
  endpointIds: [testMerchant.endpointId],
  rsaPublicKeyPem: testMerchant.publicKeyPem
}

let sim: Simulator
afterEach(async () => {
  expect(sim.checkInvariants()).toEqual([])
  await sim.close()
})

const signed = (f: Record<string, string>) => ({ status: f["status"] ?? "", orderid: f["orderid"] ?? "", client_orderid: f["client_orderid"] ?? "" })

describe("callbackControlKey", () => {
  it("signs callbacks with it while requests are verified with controlKey only", async () => {
    const receiver = callbackReceiver()
    sim = createSimulator({ merchants: [rotating], processingDelayMs: 0, callbackFetch: receiver.fetch })
    expectError(await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }), { controlKey: OLD }), "control-mismatch")
    const reply = await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }), { controlKey: NEW })
    expect(reply.status).toBe(200)
    await sim.clock.advance(0)
    expect(receiver.received).toHaveLength(1)
    const cb = receiver.received[0]!
    expect(verifyCallbackControlWithKeys(signed(cb), cb["control"], [NEW, OLD])).toEqual({ ok: true, keyIndex: 1 })
  })

  it("signs the final redirect with it", async () => {
    sim = createSimulator({ merchants: [rotating], processingDelayMs: 0 })
    const fields = requests.sale({ credit_card_number: "4000000000003220", redirect_url: "https://merchant.example/return" })
    const reply = await signedRequest(sim, "SALE", fields, { controlKey: NEW })
    const acs = String(reply.body["redirect-url"])
    const done = await sim.fetch(
      new Request(acs, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "result=pass" })
    )
    const html = await done.text()
    const hidden = Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1]!, m[2]!]))
    expect(hidden["status"]).toBe("approved")
    expect(verifyCallbackControlWithKeys(signed(hidden), hidden["control"], [NEW, OLD])).toEqual({ ok: true, keyIndex: 1 })
  })

  it("defaults to controlKey, and a pending callback restored from a snapshot keeps the merchant's callback key", async () => {
    const receiver = callbackReceiver(() => 503)
    sim = createSimulator({ merchants: [rotating], processingDelayMs: 0, callbackFetch: receiver.fetch })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }), { controlKey: NEW })
    await sim.clock.advance(0)
    const snapshot = JSON.parse(JSON.stringify(sim.snapshot()))
    expect(JSON.stringify(snapshot)).not.toContain(OLD)
    await sim.close()

    const later = callbackReceiver()
    sim = createSimulator({ merchants: [rotating], restore: snapshot, callbackFetch: later.fetch })
    await sim.clock.advance(60_000)
    const redelivered = later.received[0]!
    expect(verifyCallbackControlWithKeys(signed(redelivered), redelivered["control"], [NEW, OLD])).toEqual({ ok: true, keyIndex: 1 })
    await sim.close()

    const plain = callbackReceiver(undefined, NEW)
    const { callbackControlKey: _old, ...current } = rotating
    sim = createSimulator({ merchants: [current], processingDelayMs: 0, callbackFetch: plain.fetch })
    await signedRequest(sim, "SALE", requests.sale({ server_callback_url: CALLBACK }), { controlKey: NEW })
    await sim.clock.advance(0)
    const cb = plain.received[0]!
    expect(verifyCallbackControlWithKeys(signed(cb), cb["control"], [NEW, OLD])).toEqual({ ok: true, keyIndex: 0 })
  })

  it("refuses an empty callbackControlKey, naming the merchant and the rule", () => {
    expect(() => createSimulator({ merchants: [{ ...rotating, callbackControlKey: "" }] })).toThrow(
      "merchant paykit-test: callbackControlKey must be a non-empty string"
    )
    sim = createSimulator({ merchants: [rotating] })
  })
})
