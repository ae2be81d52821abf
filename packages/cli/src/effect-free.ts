/**
 * What the `paykit` command took from `effect` (`Data.TaggedError`, `Redacted`), without loading
 * Effect: `paykit sign` and `paykit explain` start in a fraction of the time the `effect` modules
 * take to load (docs/decisions.md#22-packages-a-team-installs: a command line pays for no Effect it does not run).
 *
 * - `Data.TaggedError(tag)`: an `Error` class with a `_tag` and the given fields, as Effect's is
 *   (not yieldable in `Effect.gen`: the CLI never yields them).
 * - `Redacted`: values that Effect's own `Redacted.value` can read, and whose `value` here reads
 *   Effect's too: both keep the secret in the registry effect 3.x keeps in its global store
 *   (`globalThis["effect/GlobalValue"]`, key `effect/Redacted/redactedRegistry`), created here when
 *   Effect is not loaded. They print as `<redacted>` everywhere (toString, toJSON, util.inspect).
 *
 * @packageDocumentation
 */
import type * as EffectRedacted from "effect/Redacted"

/** `Data.TaggedError` of effect, as a plain `Error` class. */
export const Data = {
  TaggedError: <Tag extends string>(tag: Tag) => {
    class Tagged extends Error {
      /** The error's kind, as Effect's tagged errors carry it. */
      readonly _tag: Tag = tag
      constructor(args?: Record<string, unknown>) {
        super()
        if (args !== undefined) Object.assign(this, args)
        this.name = tag
      }
    }
    return Tagged as unknown as new <A extends Record<string, any> = {}>(
      args: keyof A extends never ? void : { readonly [P in keyof A as P extends "_tag" ? never : P]: A[P] }
    ) => Error & {
      /** The error's kind, as Effect's tagged errors carry it. */
      readonly _tag: Tag
    } & Readonly<A>
  }
}

const STORE = "effect/GlobalValue"
const REGISTRY = "effect/Redacted/redactedRegistry"
const TYPE_ID = Symbol.for("effect/Redacted")
const INSPECT = Symbol.for("nodejs.util.inspect.custom")

function registry(): WeakMap<object, unknown> {
  const g = globalThis as unknown as Record<string, Map<string, unknown> | undefined>
  const store = (g[STORE] ??= new Map())
  let found = store.get(REGISTRY) as WeakMap<object, unknown> | undefined
  if (found === undefined) {
    found = new WeakMap()
    store.set(REGISTRY, found)
  }
  return found
}

const proto = {
  [TYPE_ID]: { _A: (_: never) => _ },
  pipe(this: unknown, ...fns: ReadonlyArray<(a: unknown) => unknown>) {
    return fns.reduce((a, f) => f(a), this)
  },
  toString: () => "<redacted>",
  toJSON: () => "<redacted>",
  [INSPECT]: () => "<redacted>"
}

/** effect's `Redacted` without effect: `make`, `value` and the type. */
export const Redacted = {
  make<A>(value: A): EffectRedacted.Redacted<A> {
    const redacted = Object.create(proto) as EffectRedacted.Redacted<A>
    registry().set(redacted, value)
    return redacted
  },
  value<A>(self: EffectRedacted.Redacted<A>): A {
    const map = registry()
    if (!map.has(self)) throw new Error("Unable to get redacted value")
    return map.get(self) as A
  }
}
/** The type of a redacted value (effect's `Redacted.Redacted`). */
// eslint-disable-next-line @typescript-eslint/no-namespace
export declare namespace Redacted {
  /** effect's `Redacted<A>`. */
  export type Redacted<A = string> = EffectRedacted.Redacted<A>
}
