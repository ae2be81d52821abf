/**
 * A module loaded on first use instead of when `@paykit/client` is imported: importing the package
 * loads only what its public entry needs, and the Schemas, decoders and the call engine load with
 * the first call that uses them (docs/decisions.md#22-packages-a-team-installs). After that, `now()`
 * hands the module over synchronously, so a call after the first pays no extra step.
 *
 * @packageDocumentation
 */

/** A module behind a dynamic `import()`, loaded once per process. */
export interface LazyModule<M> {
  /** The module once it has loaded, else `undefined`. */
  readonly now: () => M | undefined
  /** Loads the module (once: every caller shares one load; a failed load is tried again next time). */
  readonly load: () => Promise<M>
}

/**
 * Wraps `load` (a function whose body is the `import()`, so bundlers see the module to split off).
 *
 * @example
 * const engine = lazyModule(() => import("./client-engine"))
 */
export function lazyModule<M>(load: () => Promise<M>): LazyModule<M> {
  let loaded: M | undefined
  let loading: Promise<M> | undefined
  return {
    now: () => loaded,
    load: () =>
      loading ??= load().then(
        (m) => (loaded = m),
        (error: unknown) => {
          loading = undefined
          throw error
        }
      )
  }
}
