/**
 * The set-up the store benches share: one in-process simulator and a Promise client sending to it,
 * with or without a PayStore.
 */
import { createPayClient, type PayStoreHandle } from "@paykit/client"
import { createSimulator, testMerchant } from "@paykit/testkit"

const BASE_URL = "http://127.0.0.1:4010"
/** The simulator every client below sends to (no processing delay: a sale is final at once). */
export const sim = createSimulator({ processingDelayMs: 0, baseUrl: BASE_URL })

/** A Promise client to `sim`, recording its money calls in `store` when given one. */
export function client(store: PayStoreHandle | undefined) {
  return createPayClient({
    baseUrl: BASE_URL,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    endpointId: testMerchant.endpointId,
    fetch: sim.fetch,
    ...(store === undefined ? {} : { store })
  })
}
