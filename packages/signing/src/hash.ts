import * as nodeCrypto from "node:crypto"

// `crypto.hash` (Node 20.12+) hashes in one native call without allocating a Hash object; it is
// measurably faster for the short inputs of control digests. Older Node 20 lines fall back.
const oneShot: typeof nodeCrypto.hash | undefined =
  typeof nodeCrypto.hash === "function" ? nodeCrypto.hash : undefined

/** Lowercase hex SHA-1 of the UTF-8 bytes of `input`. */
export const sha1Hex: (input: string) => string = oneShot === undefined
  ? (input) => nodeCrypto.createHash("sha1").update(input, "utf8").digest("hex")
  : (input) => oneShot("sha1", input, "hex")

/** SHA-1 of the UTF-8 bytes of `input`, as 20 raw bytes. */
export const sha1Bytes: (input: string) => Buffer = oneShot === undefined
  ? (input) => nodeCrypto.createHash("sha1").update(input, "utf8").digest()
  : (input) => oneShot("sha1", input, "buffer")
