import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { errorCodes } from "@paykit/contracts"
import { magicAmounts, testCards, testMerchant } from "../src/index"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

describe("README", () => {
  it("lists every test card and magic amount in its one table", () => {
    const tables = readme.split("\n").filter((l) => l.startsWith("| card / amount"))
    expect(tables).toHaveLength(1)
    for (const card of testCards) expect(readme).toContain(card.number)
    for (const m of magicAmounts) expect(readme).toContain(`| amount \`${m.amount}\` |`)
  })

  it("lists every error-code of the spec", () => {
    const section = readme.slice(readme.indexOf("## Error codes"))
    for (const code of Object.keys(errorCodes)) expect(section).toContain(`\`${code}\``)
  })

  it("documents the default merchant and its public key", () => {
    expect(readme).toContain(testMerchant.login)
    expect(readme).toContain(testMerchant.controlKey)
    expect(readme).toContain(testMerchant.publicKeyPem.trim())
  })
})
