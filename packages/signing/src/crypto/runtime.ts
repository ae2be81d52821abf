/**
 * Where the cryptography comes from. No module of this package imports `node:crypto` statically,
 * so the package loads where it does not exist (Cloudflare workerd without `nodejs_compat`, a
 * browser): the synchronous API finds it through `process.getBuiltinModule` (Node ≥ 20.16, Bun,
 * Deno, workerd with `nodejs_compat`), and the asynchronous API falls back to WebCrypto.
 */
import { CryptoUnavailableError } from "../errors"

type NodeCrypto = typeof import("node:crypto")

/**
 * Which implementation an asynchronous function uses: `"node"` (`node:crypto`, OpenSSL) or
 * `"webcrypto"` (`globalThis.crypto.subtle`, every runtime). By default `"node"` where
 * `node:crypto` is reachable and `"webcrypto"` elsewhere.
 */
export type CryptoProvider = "node" | "webcrypto"

/** Chooses the provider of an asynchronous function; see {@link CryptoProvider}. */
export interface CryptoOptions {
  /** Default: {@link defaultCryptoProvider}(). */
  readonly crypto?: CryptoProvider
}

let loaded: NodeCrypto | null | undefined

/** `node:crypto` when this runtime has it and can hand it over synchronously; else `undefined`. */
export function nodeCrypto(): NodeCrypto | undefined {
  if (loaded === undefined) {
    loaded = null
    try {
      const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process
      let module = proc?.getBuiltinModule?.("node:crypto") as NodeCrypto | undefined
      // Node 20.0–20.15 lack getBuiltinModule; the CommonJS build still has `require` there. The
      // id is built at run time so that bundlers for workerd do not try to resolve it.
      if (module === undefined && proc !== undefined && typeof require === "function") module = require(["node", "crypto"].join(":")) as NodeCrypto
      // workerd's partial node:crypto (nodejs_compat) lacks createHmac in some releases: use it only when whole.
      if (module !== undefined && typeof module.createHmac === "function" && typeof module.sign === "function") loaded = module
    } catch {
      loaded = null
    }
  }
  return loaded ?? undefined
}

/**
 * `node:crypto`, for the synchronous API.
 *
 * @throws {CryptoUnavailableError} where it is missing: use the `...Async` functions there.
 */
export function requireNodeCrypto(): NodeCrypto {
  const module = nodeCrypto()
  if (module === undefined) throw new CryptoUnavailableError("node:crypto")
  return module
}

/** The provider asynchronous functions use when none is given: `"node"` where `node:crypto` is reachable, else `"webcrypto"`. */
export function defaultCryptoProvider(): CryptoProvider {
  return nodeCrypto() === undefined ? "webcrypto" : "node"
}

/** The provider for one call, checked. */
export function providerOf(options: CryptoOptions | undefined): CryptoProvider {
  const chosen = options?.crypto
  if (chosen === undefined) return defaultCryptoProvider()
  if (chosen === "node") {
    requireNodeCrypto()
    return chosen
  }
  if (chosen === "webcrypto") {
    subtle()
    return chosen
  }
  throw new CryptoUnavailableError(String(chosen).slice(0, 20))
}

/**
 * `globalThis.crypto.subtle`.
 *
 * @throws {CryptoUnavailableError} when the runtime has no WebCrypto.
 */
export function subtle(): SubtleCrypto {
  const s = (globalThis as { crypto?: { subtle?: SubtleCrypto } }).crypto?.subtle
  if (s === undefined) throw new CryptoUnavailableError("webcrypto")
  return s
}

/** Cryptographically strong random bytes from WebCrypto (present in Node ≥ 19 too). */
export function randomBytesInto(bytes: Uint8Array): Uint8Array {
  const c = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto
  if (c?.getRandomValues !== undefined) {
    // getRandomValues fills at most 65,536 bytes per call.
    for (let i = 0; i < bytes.length; i += 65536) c.getRandomValues(bytes.subarray(i, Math.min(bytes.length, i + 65536)))
    return bytes
  }
  requireNodeCrypto().randomFillSync(bytes)
  return bytes
}
