/**
 * A client's engine: the pipeline every call runs through (the operations' Schemas and decoders,
 * signing, the transport), the intent ledger its money-moving calls keep, and `recover()` over a
 * store. `lazy-engine.ts` builds it on the client's first call, so importing `@paykit/client` loads
 * none of it (docs/decisions.md#22-packages-a-team-installs).
 *
 * @packageDocumentation
 */
import type * as Effect from "effect/Effect"
import type { PayClientConfig } from "./config"
import type { CallError } from "./errors"
import { memoryIntentLedger, type IntentLedger } from "./intents/ledger"
import { recover, type RecoverOptions, type RecoverReport } from "./intents/recover"
import { storeIntentLedger } from "./intents/store-ledger"
import type { StatusReply } from "./operations/table"
import { makePipeline, type Pipeline } from "./call/pipeline"
import type { SigningKeys } from "./call/sign"
import type { PayStoreService } from "./store/service"
import type { StoreError, StoreInputError } from "./store/types"
import { makeTransports } from "./transport/fetch"

/** One client's engine. */
export interface ClientEngine {
  readonly pipeline: Pipeline
  /** Where the client's money-moving calls keep their intents: in memory, or in the configured store. */
  readonly ledger: IntentLedger
  /** Settles the intents a crashed instance left unfinished in `store` (the client's `config.store`). */
  readonly recover: (store: PayStoreService, options?: RecoverOptions) => Effect.Effect<RecoverReport, StoreError | StoreInputError>
}

/** Builds a client's engine. Money-moving calls share one intent ledger per client. */
export function makeClientEngine(config: PayClientConfig, keys: SigningKeys): ClientEngine {
  const store = config.store
  const ledger = store === undefined ? memoryIntentLedger() : storeIntentLedger(store, { leaseMs: config.intentLeaseMs })
  const pipeline = makePipeline(config, keys, makeTransports(config.baseUrl, config.fetch).send, ledger)
  return {
    pipeline,
    ledger,
    recover: (storeOfClient, options) =>
      recover(storeOfClient, (query, endpoint) => pipeline.call("STATUS", query, { endpoint: endpoint === config.endpointId ? "endpoint" : "group" }) as Effect.Effect<StatusReply, CallError>, {
        settleMs: config.reconcile.settleMs,
        notFoundProvesWithinMs: config.reconcile.notFoundProvesWithinMs,
        ...options
      })
  }
}
