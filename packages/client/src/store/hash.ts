/**
 * SHA-256 through WebCrypto, so the store's hashing works on Node, Bun, Deno and workers alike.
 *
 * @packageDocumentation
 */

/** Lower-case hex SHA-256 of a string's UTF-8 bytes. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("")
}
