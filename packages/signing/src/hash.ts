import { CryptoUnavailableError } from "./errors"
import { nodeCrypto } from "./crypto/runtime"

const node = nodeCrypto()

// `crypto.hash` (Node 20.12+) hashes in one native call without allocating a Hash object; it is
// measurably faster for the short inputs of control digests. Older Node 20 lines fall back.
const oneShot = node !== undefined && typeof node.hash === "function" ? node.hash : undefined

function unavailable(): never {
  throw new CryptoUnavailableError("node:crypto")
}

/** Lowercase hex SHA-1 of the UTF-8 bytes of `input` (synchronous: `node:crypto`). */
export const sha1Hex: (input: string) => string = node === undefined
  ? unavailable
  : oneShot === undefined
    ? (input) => node.createHash("sha1").update(input, "utf8").digest("hex")
    : (input) => oneShot("sha1", input, "hex")

/** SHA-1 of the UTF-8 bytes of `input`, as 20 raw bytes (synchronous: `node:crypto`). */
export const sha1Bytes: (input: string) => Uint8Array = node === undefined
  ? unavailable
  : oneShot === undefined
    ? (input) => node.createHash("sha1").update(input, "utf8").digest()
    : (input) => oneShot("sha1", input, "buffer")
