import { describe, expect, it } from "vitest"
import { EFFECT_PEER_RANGE, effectVersionProblem } from "../src/effect-version"

describe("effectVersionProblem", () => {
  it("accepts every effect 3 from 3.22", () => {
    for (const v of ["3.22.0", "3.22.4", "3.23.1", "3.30.0"]) expect(effectVersionProblem(v)).toBeUndefined()
  })
  it("names the app's version and the range outside it", () => {
    for (const v of ["3.21.5", "3.0.0", "4.0.0", "4.1.0", "2.4.19", "not-a-version"]) {
      const problem = effectVersionProblem(v)
      expect(problem).toContain(`effect ${v}`)
      expect(problem).toContain(EFFECT_PEER_RANGE)
    }
  })
})
