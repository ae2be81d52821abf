/**
 * Callback claims on a `PayStore`: a callback's effect runs once across a fleet, claimed by the
 * callback's exact text (the store keeps its hash) in the same store as the fleet's intents.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import type { PayStoreService } from "../store/service"
import type { CallbackClaimStore, ClaimResult } from "./handler"

// The store each claim store made here keeps its claims in.
const claimStores = new WeakMap<object, PayStoreService>()

/** The `PayStore` a claim store made by {@link storeCallbackClaims} keeps its claims in. */
export function storeOfClaims(claims: object): PayStoreService | undefined {
  return claimStores.get(claims)
}

/** Callback claims on a `PayStore` (by the callback's exact text; the store keeps its hash). */
export function storeCallbackClaims(store: PayStoreService): CallbackClaimStore {
  const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromise(effect)
  const claims: CallbackClaimStore = {
    claim: (query, leaseMs) =>
      run(store.claimCallback(query, { leaseMs })).then((c): ClaimResult =>
        c._tag === "Claimed" ? "claimed" : c._tag === "Done" ? "done" : "running-elsewhere"),
    complete: (query) => run(store.completeCallback(query)),
    release: (query) => run(store.releaseCallback(query))
  }
  claimStores.set(claims, store)
  return claims
}
