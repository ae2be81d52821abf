import { createSimulator, testMerchant, type Simulator } from "@paykit/testkit"
import { createPayClient, makePayClient, resolveConfig, type PayClientOptions } from "../../src/index"

export const BASE_URL = "http://127.0.0.1:4010"

/** Client options for the simulator's test merchant, with ms-scale retry and polling. */
export function clientOptions(sim: Simulator, extra: Partial<PayClientOptions> = {}): PayClientOptions {
  return {
    baseUrl: BASE_URL,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    privateKeyPem: testMerchant.privateKeyPem,
    endpointId: testMerchant.endpointId,
    endpointGroupId: testMerchant.endpointGroupId,
    fetch: sim.fetch,
    retry: { maxRetries: 4, baseDelayMs: 1, maxDelayMs: 4 },
    timeoutMs: 2000,
    reconcile: { settleMs: 60, pollIntervalMs: 5 },
    poll: { fastIntervalMs: 2, fastPhaseMs: 50, slowIntervalMs: 5, deadlineMs: 2000 },
    ...extra
  }
}

/** A simulator (virtual clock, immediate finality unless told) with a Promise client and an Effect service on it. */
export function setup(simOptions: Parameters<typeof createSimulator>[0] = {}, extra: Partial<PayClientOptions> = {}) {
  const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL, ...simOptions })
  const options = clientOptions(sim, extra)
  return { sim, pay: createPayClient(options), service: makePayClient(resolveConfig(options)) }
}
