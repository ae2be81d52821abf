/**
 * The testkit's checking proxy seen from the client: a session of client calls through
 * `paykit-sim --proxy`'s server in front of a simulator reports no mismatch, and the recording of it
 * replays to the same client results. All on loopback.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createSimulator, readRecording, startProxy, testMerchant } from "@paykit/testkit"
import { afterAll, describe, expect, it } from "vitest"
import { createPayClient, type PayClientOptions } from "../../src/index"
import { saleInput } from "../support/fixtures"

const dir = mkdtempSync(join(tmpdir(), "paykit-client-proxy-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const options = (baseUrl: string): PayClientOptions => ({
  baseUrl,
  login: testMerchant.login,
  controlKey: testMerchant.controlKey,
  privateKeyPem: testMerchant.privateKeyPem,
  endpointId: testMerchant.endpointId,
  retry: { maxRetries: 0 },
  timeoutMs: 5000
})

const withoutKey = (result: unknown): unknown => {
  if (typeof result !== "object" || result === null) return result
  const { idempotencyKey: _key, ...rest } = result as Record<string, unknown>
  return rest
}

describe("a client session through the checking proxy", () => {
  it("passes the spec, and its recording replays to the same client results", async () => {
    const sim = createSimulator({ processingDelayMs: 0 })
    const upstream = await sim.listen({ port: 0, host: "127.0.0.1" })
    const file = join(dir, "session.jsonl")
    const proxy = await startProxy({ upstream: upstream.url, record: file })
    const sale = saleInput({ credit_card_number: "4111111111111111" })
    const declined = saleInput({ credit_card_number: "4000000000000002" })
    const session = async (baseUrl: string) => {
      const pay = createPayClient(options(baseUrl))
      const results: Array<unknown> = []
      results.push(await pay.sale(sale))
      results.push(await pay.sale(declined))
      if (baseUrl === proxy.url) await sim.clock.advance(1)
      results.push(await pay.status({ login: testMerchant.login, client_orderid: sale.client_orderid }))
      results.push(await pay.status({ login: testMerchant.login, client_orderid: declined.client_orderid }))
      results.push(await pay.sale({ ...sale, email: "not-an-email" }).catch((e: { _tag: string }) => e._tag))
      return results
    }
    try {
      const live = await session(proxy.url)
      expect(live[2]).toMatchObject({ status: "approved" })
      expect(live[3]).toMatchObject({ status: "declined" })
      expect(live[4]).toBe("InputError") // refused by the client before sending: nothing reaches the proxy
      expect(proxy.exchanges().map((x) => [x.operation, x.mismatches.length])).toEqual([["SALE", 0], ["SALE", 0], ["STATUS", 0], ["STATUS", 0]])

      const replay = await startProxy({ replay: await readRecording(file) })
      try {
        // The same results, but for the idempotency key each call generates on this side.
        expect((await session(replay.url)).map(withoutKey)).toEqual(live.map(withoutKey))
      } finally {
        await replay.close()
      }
    } finally {
      await proxy.close()
      await upstream.close()
      await sim.close()
    }
  })
})
