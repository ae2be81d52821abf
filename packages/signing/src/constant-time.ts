import { timingSafeEqual } from "node:crypto"

/**
 * Compares two byte strings in time that depends only on their lengths. Lengths are public here
 * (a digest or signature size), so an early return on a length difference leaks nothing.
 */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}

const HEX_40 = /^[0-9a-fA-F]{40}$/

/**
 * Decodes a received SHA-1 hex digest (either letter case), or `undefined` when it is not exactly
 * 40 hex digits. The received value is not secret, so validating it with a regex is fine.
 */
export function decodeSha1Hex(received: string): Buffer | undefined {
  return HEX_40.test(received) ? Buffer.from(received, "hex") : undefined
}
