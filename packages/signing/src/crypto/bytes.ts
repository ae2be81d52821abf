/**
 * Byte helpers that need neither `Buffer` nor `node:crypto`, so the WebCrypto path runs anywhere.
 */

const encoder = new TextEncoder()

/** UTF-8 bytes of a string. */
export function utf8(text: string): Uint8Array {
  return encoder.encode(text)
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

function encode(bytes: Uint8Array, alphabet: string, pad: boolean): string {
  let out = ""
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number)
    out += alphabet[n >> 18] as string + (alphabet[(n >> 12) & 63] as string) + (alphabet[(n >> 6) & 63] as string) + (alphabet[n & 63] as string)
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = (bytes[i] as number) << 16
    out += (alphabet[n >> 18] as string) + (alphabet[(n >> 12) & 63] as string) + (pad ? "==" : "")
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8)
    out += (alphabet[n >> 18] as string) + (alphabet[(n >> 12) & 63] as string) + (alphabet[(n >> 6) & 63] as string) + (pad ? "=" : "")
  }
  return out
}

/** Standard Base64 with padding. */
export function base64(bytes: Uint8Array): string {
  return encode(bytes, B64, true)
}

/** Base64url without padding. */
export function base64url(bytes: Uint8Array): string {
  return encode(bytes, B64URL, false)
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const LOOKUP = new Int16Array(128).fill(-1)
for (let i = 0; i < 64; i++) LOOKUP[B64.charCodeAt(i)] = i

/** Decodes canonical padded standard Base64 only (one accepted spelling per byte string), else `undefined`. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0 || !BASE64.test(text)) return undefined
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
  const out = new Uint8Array((text.length / 4) * 3 - padding)
  let o = 0
  for (let i = 0; i < text.length; i += 4) {
    const a = LOOKUP[text.charCodeAt(i)] as number
    const b = LOOKUP[text.charCodeAt(i + 1)] as number
    const c = text[i + 2] === "=" ? 0 : (LOOKUP[text.charCodeAt(i + 2)] as number)
    const d = text[i + 3] === "=" ? 0 : (LOOKUP[text.charCodeAt(i + 3)] as number)
    if (a < 0 || b < 0 || c < 0 || d < 0) return undefined
    const n = (a << 18) | (b << 12) | (c << 6) | d
    if (o < out.length) out[o++] = n >> 16
    if (o < out.length) out[o++] = (n >> 8) & 255
    if (o < out.length) out[o++] = n & 255
  }
  // Non-zero bits hidden in the last character would give a second spelling of the same bytes.
  return base64(out) === text ? out : undefined
}

/** Lowercase hex. */
export function hex(bytes: Uint8Array): string {
  let out = ""
  for (let i = 0; i < bytes.length; i++) out += ((bytes[i] as number) < 16 ? "0" : "") + (bytes[i] as number).toString(16)
  return out
}

/** Compares two byte strings in time that depends only on their lengths (lengths are public here). */
export function constantTimeEqualBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number)
  return diff === 0
}
