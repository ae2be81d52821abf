/**
 * The store of `@paykit/client` (the core part: the service, its types and the memory adapter).
 * The PGlite and PostgreSQL adapters live in their own entry points,
 * `@paykit/client/store/pglite` and `@paykit/client/store/postgres`, so their optional peer
 * dependencies are loaded only by those who use them.
 *
 * @packageDocumentation
 */
export type { AdapterName } from "./backend"
export { memoryStoreLayer, openMemoryStore } from "./memory"
export { storeNonceStore } from "./nonces"
export { maskPans, sanitizeJson } from "./sanitize"
export {
  callbackQueryHash,
  PayStore,
  type LeaseOptions,
  type PayStoreHandle,
  type PayStoreService,
  type StoreOptions,
  type UnfinishedOptions
} from "./service"
export {
  StoreError,
  StoreInputError,
  type BeforeSnapshot,
  type CallbackClaim,
  type CallbackCompletion,
  type Intent,
  type IntentInput,
  type IntentOutcome,
  type JsonValue,
  type MigrationRecord,
  type PurgeReport,
  type RecordIntentResult,
  type RecordOutcomeResult
} from "./types"
