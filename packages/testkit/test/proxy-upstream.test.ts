/**
 * The checking proxy in front of a second simulator (on loopback): a clean session reports no
 * mismatch, control- and OAuth-signed requests (signed for the proxy's URL) pass through as sent,
 * a request that breaks the spec is reported, and the session it records (card numbers masked, no
 * control, signature or key) replays to the same results.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { OperationId } from "@paykit/contracts"
import { createSimulator, readRecording, requests, startProxy, testMerchant, type CheckingProxy, type Simulator } from "../src/index"
import { buildRequest } from "./helpers"

const dir = mkdtempSync(join(tmpdir(), "paykit-proxy-"))
const recordFile = join(dir, "session.jsonl")
let sim: Simulator
let upstream: { url: string; close(): Promise<void> }
let proxy: CheckingProxy

beforeAll(async () => {
  sim = createSimulator({ processingDelayMs: 0 })
  upstream = await sim.listen({ port: 0, host: "127.0.0.1" })
  proxy = await startProxy({ upstream: upstream.url, record: recordFile })
})

afterAll(async () => {
  await proxy.close()
  await upstream.close()
  await sim.close()
  rmSync(dir, { recursive: true, force: true })
})

interface Result {
  readonly status: number
  readonly body: unknown
}

/** One step of the session: an operation and its fields (the same fields are sent live and in replay). */
type Step = readonly [OperationId, Record<string, string>]

async function send(base: string, [operationId, fields]: Step): Promise<Result> {
  const response = await fetch(buildRequest(undefined as never, operationId, fields, { base }))
  return { status: response.status, body: await response.json() }
}

describe("the checking proxy in front of a simulator", () => {
  const sale = requests.sale({ credit_card_number: "4111111111111111" })
  const session: Array<Step> = [
    ["SALE", sale],
    ["STATUS", { login: testMerchant.login, client_orderid: sale.client_orderid }],
    ["PAYOUT", requests.payout()],
    ["SALE", requests.sale({ email: "not-an-email" })]
  ]
  const live: Array<Result> = []

  it("forwards a session, signed for the proxy's URL, and reports only the request that breaks the spec", async () => {
    live.push(await send(proxy.url, session[0]!))
    await sim.clock.advance(1)
    for (const step of session.slice(1)) live.push(await send(proxy.url, step))
    expect(live.map((r) => r.status)).toEqual([200, 200, 200, 400])
    expect(live[1]!.body).toMatchObject({ type: "status-response", status: "approved" })
    const exchanges = proxy.exchanges()
    expect(exchanges.map((x) => x.operation)).toEqual(["SALE", "STATUS", "PAYOUT", "SALE"])
    expect(exchanges.slice(0, 3).map((x) => x.mismatches)).toEqual([[], [], []])
    // The upstream refused the same request the proxy reported (its email rule); its 400 reply is as the spec says.
    expect(live[3]!.body).toMatchObject({ "error-code": "invalid-field" })
    expect(exchanges[3]!.mismatches).toEqual([expect.objectContaining({ side: "request", field: "email", kind: "rule" })])
  })

  it("records the session with card numbers masked and no control, signature or key", () => {
    const text = readFileSync(recordFile, "utf8")
    expect(text).not.toContain("4111111111111111")
    expect(text).toContain("411111******1111")
    expect(text).not.toContain(testMerchant.controlKey)
    expect(text).not.toMatch(/"control"|oauth_|authorization|"cvv2":"[0-9]|"expire_(month|year)":"[0-9]/i)
  })

  it("replays the recorded session to the same results", async () => {
    const replay = await startProxy({ replay: await readRecording(recordFile) })
    try {
      const replayed: Array<Result> = []
      for (const step of session) replayed.push(await send(replay.url, step))
      expect(replayed).toEqual(live)
      expect(replay.exchanges().map((x) => x.via)).toEqual(["replay", "replay", "replay", "replay"])
      // A request the session never made is refused, naming the operation.
      const unknown = await send(replay.url, ["SALE", requests.sale()])
      expect(unknown.status).toBe(404)
      expect(JSON.stringify(unknown.body)).toContain("replay: no recorded exchange for POST SALE")
    } finally {
      await replay.close()
    }
  })
})
