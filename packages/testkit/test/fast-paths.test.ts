/**
 * The simulator's hot-path shortcuts (issue #14) against the plain computations they replace:
 * each must give the same result on any input, so a shortcut can never change a reply.
 */
import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { createSimulator } from "../src/index"
import { engineOf } from "../src/simulator"

describe("card fingerprint from the hex digest", () => {
  it("is the first 16 bytes of SHA-256(salt, control key, PAN) as hex, as a Buffer digest gave it", async () => {
    const sim = createSimulator()
    const engine = engineOf(sim)!
    fc.assert(fc.property(fc.string({ maxLength: 24 }), fc.string({ maxLength: 40 }), (pan, key) => {
      const digest = createHash("sha256").update(`${engine.fingerprintSalt}\u0000${key}\u0000${pan}`).digest()
      expect(engine.fingerprint(pan, key)).toBe(digest.toString("hex", 0, 16))
    }), { numRuns: 2000 })
    await sim.close()
  })
})
