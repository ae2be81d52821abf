/**
 * Control-key rotation: the merchant has moved to a new key; during the switch the
 * gateway signs callbacks and final redirects with the old key or the new one. A client given
 * `controlKey: [new, old]` signs its requests with the new key, accepts callbacks signed with
 * either and says which (by index), and refuses a third key with a reason that names no key.
 */
import { callbackControl } from "@paykit/signing"
import { createSimulator, testMerchant, type MerchantConfig } from "@paykit/testkit"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import { afterAll, describe, expect, it } from "vitest"
import { CallbackSignatureError, createPayClient, payClientConfigFromEnv, resolveConfig, type ConfirmedCallback } from "../../src/index"
import { saleInput } from "../support/fixtures"
import { BASE_URL, clientOptions } from "../support/sim"

const OLD = testMerchant.controlKey
const NEW = "9D2B7C41-6E0A-4F58-B3C2-1A7E5D9F0C64"
const THIRD = "0F0F0F0F-AAAA-4BBB-8CCC-DDDDDDDDDDDD"
const CALLBACK_URL = "https://shop.example.com/paykit/callback"

/** A gateway whose merchant key is `NEW` and whose callbacks are signed with `callbackKey`. */
function gateway(callbackKey: string) {
  const sent: Array<string> = []
  const merchant: MerchantConfig = {
    login: testMerchant.login,
    controlKey: NEW,
    callbackControlKey: callbackKey,
    endpointIds: [testMerchant.endpointId],
    endpointGroupIds: [testMerchant.endpointGroupId],
    rsaPublicKeyPem: testMerchant.publicKeyPem
  }
  const sim = createSimulator({
    merchants: [merchant],
    processingDelayMs: 0,
    baseUrl: BASE_URL,
    callbackFetch: (async (input: RequestInfo | URL) => {
      sent.push(new URL(input instanceof Request ? input.url : String(input)).search.slice(1))
      return new Response("OK")
    }) as typeof fetch
  })
  // Current key first, the previous one after it.
  const pay = createPayClient(clientOptions(sim, { controlKey: [NEW, OLD] }))
  /** Makes a sale (signed by the client: the gateway only accepts the new key) and returns its callback. */
  const saleCallback = async (): Promise<string> => {
    const ack = await pay.sale(saleInput({ server_callback_url: CALLBACK_URL }))
    await sim.clock.advance(1)
    const orderid = String(ack["paynet-order-id"])
    const query = sent.find((q) => new URLSearchParams(q).get("orderid") === orderid)
    if (query === undefined) throw new Error(`no callback for order ${orderid}`)
    return query
  }
  return { sim, pay, saleCallback }
}

describe("a control-key rotation", () => {
  const before = gateway(OLD) // the gateway still signs callbacks with the old key
  const after = gateway(NEW) // ... and then with the new one
  const stranger = gateway(THIRD) // a key the merchant never had
  afterAll(async () => {
    await Promise.all([before.sim.close(), after.sim.close(), stranger.sim.close()])
  })

  it("accepts a callback signed with the old key and one signed with the new key, says which, and refuses a third key naming no key", async () => {
    const fromOld = await before.pay.verifyCallback(new URLSearchParams(await before.saleCallback()))
    expect(fromOld.keyIndex).toBe(1)
    const fromNew = await after.pay.verifyCallback(new URLSearchParams(await after.saleCallback()))
    expect(fromNew.keyIndex).toBe(0)

    const refused = await stranger.pay.verifyCallback(new URLSearchParams(await stranger.saleCallback())).then(
      () => undefined,
      (e: unknown) => e
    )
    expect(refused).toBeInstanceOf(CallbackSignatureError)
    expect((refused as CallbackSignatureError).reason).toBe("mismatch")
    const told = `${(refused as Error).message} ${JSON.stringify(refused)} ${String((refused as Error).stack)}`
    for (const key of [OLD, NEW, THIRD]) expect(told).not.toContain(key)
  })

  it("the callback handler runs both during the rotation and answers 403 to the third key", async () => {
    const seen: Array<ConfirmedCallback> = []
    const onCallback = (cb: ConfirmedCallback) => void seen.push(cb)
    const deliver = async (world: ReturnType<typeof gateway>) =>
      (await world.pay.callbackHandler({ onCallback })(new Request(`${CALLBACK_URL}?${await world.saleCallback()}`))).status
    expect(await deliver(before)).toBe(200)
    expect(await deliver(after)).toBe(200)
    expect(await deliver(stranger)).toBe(403)
    expect(seen.map((cb) => cb.keyIndex)).toEqual([1, 0])
  })

  it("verifies a final redirect (a POSTed form) signed with either key", async () => {
    const values = { status: "approved", orderid: "7000001", client_orderid: "redirect-1" }
    const post = (key: string) =>
      new Request("https://shop.example.com/return", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ ...values, merchant_order: values.client_orderid, control: callbackControl(values, key) }).toString()
      })
    expect((await after.pay.verifyCallback(post(OLD))).keyIndex).toBe(1)
    expect((await after.pay.verifyCallback(post(NEW))).keyIndex).toBe(0)
    await expect(after.pay.verifyCallback(post(THIRD))).rejects.toMatchObject({ _tag: "CallbackSignatureError", reason: "mismatch" })
  })

  it("holds every listed key as Redacted, signs with the first, and keeps the single-key form", () => {
    const config = resolveConfig({ baseUrl: BASE_URL, login: "l", controlKey: [NEW, Redacted.make(OLD)], endpointId: 1 })
    expect(config.controlKeys?.map((k) => Redacted.isRedacted(k))).toEqual([true, true])
    expect(Redacted.value(config.controlKey)).toBe(NEW)
    expect(JSON.stringify(config)).not.toContain(NEW)
    expect(JSON.stringify(config)).not.toContain(OLD)
    const single = resolveConfig({ baseUrl: BASE_URL, login: "l", controlKey: OLD, endpointId: 1 })
    expect(single.controlKeys?.map((k) => Redacted.value(k))).toEqual([OLD])
  })

  it("reads the previous key from PAYKIT_PREVIOUS_CONTROL_KEY", () => {
    const env = (extra: Record<string, string>) =>
      Effect.runSync(
        Effect.withConfigProvider(
          payClientConfigFromEnv,
          ConfigProvider.fromMap(new Map(Object.entries({ PAYKIT_BASE_URL: BASE_URL, PAYKIT_LOGIN: "l", PAYKIT_CONTROL_KEY: NEW, PAYKIT_ENDPOINT_ID: "1", ...extra })))
        )
      )
    expect(env({ PAYKIT_PREVIOUS_CONTROL_KEY: OLD }).controlKeys?.map((k) => Redacted.value(k))).toEqual([NEW, OLD])
    expect(env({}).controlKeys?.map((k) => Redacted.value(k))).toEqual([NEW])
  })
})
