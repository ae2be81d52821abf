import { constantTimeEqualBytes } from "./crypto/bytes"
import { nodeCrypto } from "./crypto/runtime"

const timingSafeEqual = nodeCrypto()?.timingSafeEqual

/**
 * Compares two byte strings in time that depends only on their lengths. Lengths are public here
 * (a digest or signature size), so an early return on a length difference leaks nothing.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  return timingSafeEqual === undefined ? constantTimeEqualBytes(a, b) : timingSafeEqual(a, b)
}

const HEX_40 = /^[0-9a-fA-F]{40}$/

/**
 * Decodes a received SHA-1 hex digest (either letter case), or `undefined` when it is not exactly
 * 40 hex digits. The received value is not secret, so validating it with a regex is fine.
 */
export function decodeSha1Hex(received: string): Uint8Array | undefined {
  if (!HEX_40.test(received)) return undefined
  const out = new Uint8Array(20)
  for (let i = 0; i < 20; i++) out[i] = parseInt(received.slice(2 * i, 2 * i + 2), 16)
  return out
}
