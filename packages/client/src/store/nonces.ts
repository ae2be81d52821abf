/**
 * The signing package's `NonceStore` over a `PayStore`, so every instance of a fleet verifying
 * OAuth requests refuses a nonce any of them has seen (docs/decisions.md#6-oauth-10a-exactly-as-rfc-5849: a nonce seen before within the
 * window is a replay).
 *
 * @packageDocumentation
 */
import type { NonceStore } from "@paykit/signing"
import * as Effect from "effect/Effect"
import type { PayStoreService } from "./service"

/** A `NonceStore` for `@paykit/signing`'s OAuth verifier, backed by the store (atomic in the database). */
export function storeNonceStore(store: Pick<PayStoreService, "rememberNonce">): NonceStore {
  return {
    remember: (consumerKey, nonce, expiresAt, now) => Effect.runPromise(store.rememberNonce(consumerKey, nonce, expiresAt, now))
  }
}
