/**
 * The hosted card page's inline check uses the one Luhn check of `@paykit/contracts/card-data`,
 * written into the page's script: the script parses, and its check agrees with `luhnValid`.
 */
import { afterEach, beforeEach, expect, it } from "vitest"
import { luhnValid } from "@paykit/contracts/card-data"
import { createSimulator, requests, type Simulator } from "../src/index"
import { signedRequest } from "./helpers"

let sim: Simulator
beforeEach(() => {
  sim = createSimulator({ processingDelayMs: 0 })
})
afterEach(async () => {
  await sim.close()
})

it("the card page's script parses and its Luhn check is luhnValid's", async () => {
  const reply = await signedRequest(sim, "SALEFORM", requests.saleForm())
  expect(reply.status).toBe(200)
  const page = await (await sim.fetch(new Request(String(reply.body["redirect-url"])))).text()
  const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1]
  expect(script).toBeDefined()
  expect(() => new Function(script!)).not.toThrow()
  const source = /var luhn=\(([\s\S]*?)\);\n/.exec(script!)?.[1]
  expect(source).toBeDefined()
  const luhn = new Function(`return (${source})`)() as (digits: string) => boolean
  for (const digits of ["4111111111111111", "4111111111111112", "4000000000003220", "79927398713", "0", ""]) {
    expect(luhn(digits), digits).toBe(luhnValid(digits))
  }
})
