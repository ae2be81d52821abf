/**
 * A client's engine (`client-engine.ts`) behind entries that build it on the client's first call:
 * importing `@paykit/client` and creating a client load no Schema, decoder or transport
 * (docs/decisions.md#22-packages-a-team-installs). The first call waits for the engine's module to
 * load, then runs as every call does; once the engine is built, the pipeline's entries are the
 * engine's own, so a call after the first takes the same steps it always did.
 *
 * @packageDocumentation
 */
import * as Effect from "effect/Effect"
import type { Pipeline } from "./call/pipeline"
import type { SigningKeys } from "./call/sign"
import type { ClientEngine } from "./client-engine"
import type { PayClientConfig } from "./config"
import { lazyModule, type LazyModule } from "./lazy-module"

/** The engine's module, as `import()` gives it. */
export type EngineModule = typeof import("./client-engine")

const engineModule = lazyModule(() => import("./client-engine"))

/** Loads the engine's module now, as a client's first call would (a test setup's warm-up). */
export const loadClientEngine = (): Promise<EngineModule> => engineModule.load()

/** The engine's entries, each building the engine on first use. */
export interface LazyEngine {
  /** The pipeline's entries. */
  readonly pipeline: Pipeline
  /** The ledger's `callsOn` (this client's calls on an order, for callbacks). */
  readonly callsOn: ClientEngine["ledger"]["callsOn"]
  /** The engine's `recover`. */
  readonly recover: ClientEngine["recover"]
}

/**
 * Entries over the engine of one client (`config`, `keys`), built on the first call. `source` is
 * where the engine's module comes from (the one shared load, unless a test gives its own).
 */
export function lazyEngine(config: PayClientConfig, keys: SigningKeys, source: LazyModule<EngineModule> = engineModule): LazyEngine {
  let engine: ClientEngine | undefined
  const now = (): ClientEngine | undefined => {
    if (engine !== undefined) return engine
    const loaded = source.now()
    if (loaded === undefined) return undefined
    engine = loaded.makeClientEngine(config, keys)
    // From here on the pipeline's entries are the engine's own: a call reads them from this object
    // and takes no step through this module.
    pipeline.call = engine.pipeline.call
    pipeline.callPromise = engine.pipeline.callPromise
    pipeline.request = engine.pipeline.request
    pipeline.requestPromise = engine.pipeline.requestPromise
    pipeline.status = engine.pipeline.status
    return engine
  }
  const built = (): Promise<ClientEngine> => source.load().then(() => now()!)
  // The first call's Effect: the engine once loaded, then the call (checked when the Effect runs).
  const later = <A, E>(run: (e: ClientEngine) => Effect.Effect<A, E>): Effect.Effect<A, E> => Effect.flatMap(Effect.promise(built), run)
  // An entry taken from the object before the engine was built still works: it asks `now()`.
  const pipeline: { -readonly [K in keyof Pipeline]: Pipeline[K] } = {
    call: (operation, input, options) => {
      const e = now()
      return e !== undefined ? e.pipeline.call(operation, input, options) : later((e) => e.pipeline.call(operation, input, options))
    },
    callPromise: (operation, input, options) => {
      const e = now()
      return e !== undefined ? e.pipeline.callPromise(operation, input, options) : built().then((e) => e.pipeline.callPromise(operation, input, options))
    },
    request: (description, options) => {
      const e = now()
      return e !== undefined ? e.pipeline.request(description, options) : later((e) => e.pipeline.request(description, options))
    },
    requestPromise: (description, options) => {
      const e = now()
      return e !== undefined ? e.pipeline.requestPromise(description, options) : built().then((e) => e.pipeline.requestPromise(description, options))
    },
    status: (query) => {
      const e = now()
      return e !== undefined ? e.pipeline.status(query) : later((e) => e.pipeline.status(query))
    }
  }
  // A client made once the module has loaded (every one after a process's first call) is built now.
  now()
  return {
    pipeline,
    callsOn: (order) => {
      const e = now()
      return e !== undefined ? e.ledger.callsOn(order) : later((e) => e.ledger.callsOn(order))
    },
    recover: (store, options) => {
      const e = now()
      return e !== undefined ? e.recover(store, options) : later((e) => e.recover(store, options))
    }
  }
}
