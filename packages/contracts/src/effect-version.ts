/**
 * The one check of the app's `effect` at load time. `effect` is a peer dependency (`^3.22`) of the
 * packages that use it: the app provides it, and npm/pnpm warn about a version outside the range
 * when installing. This check says the same thing at run time, in one line, before an
 * incompatible Effect fails somewhere deep inside (on effect 4: `self.build is not a function`).
 * It reads `effect/ModuleVersion` only, which costs nothing next to `effect/Schema`.
 *
 * @packageDocumentation
 */
import { getCurrentVersion } from "effect/ModuleVersion"

/** The peer range of `effect` every `@paykit/*` package is built and tested for. */
export const EFFECT_PEER_RANGE = "^3.22.0"

/**
 * Why `version` (an effect version such as `3.22.4`) is outside {@link EFFECT_PEER_RANGE}, or
 * `undefined` when it is inside.
 */
export function effectVersionProblem(version: string): string | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version)
  const inside = m !== null && Number(m[1]) === 3 && Number(m[2]) >= 22
  return inside
    ? undefined
    : `@paykit/* needs effect ${EFFECT_PEER_RANGE} (a peer dependency your app provides), but this app loads effect ${version}: install effect@^3.22 (npm install effect@^3.22)`
}

// Once per process, whichever entry (or copy: ESM and CJS) loads first.
const CHECKED = Symbol.for("@paykit/contracts/effect-version-checked")

/**
 * Checks the app's `effect` against {@link EFFECT_PEER_RANGE}, once per process: another 3.x minor
 * gets a warning (`PAYKIT_EFFECT_VERSION: …`), another major an error. The entries that load
 * Effect only on first use (the client's) call it when they load, so an app hears of a wrong
 * `effect` at import as it does from this package's main entry.
 */
export function checkEffectVersion(): void {
  const seen = globalThis as { [CHECKED]?: boolean }
  if (seen[CHECKED] === true) return
  seen[CHECKED] = true
  const version = getCurrentVersion()
  const problem = effectVersionProblem(version)
  if (problem === undefined) return
  const message = `PAYKIT_EFFECT_VERSION: ${problem}`
  // effect 3.21 and older still load (types and some behaviour differ): a warning, once; another
  // major would fail in obscure ways: an error now
  if (/^3\./.test(version)) {
    if (typeof process !== "undefined" && typeof process.emitWarning === "function") process.emitWarning(message)
    else console.warn(message)
  } else {
    seen[CHECKED] = false
    throw new Error(message)
  }
}

checkEffectVersion()
