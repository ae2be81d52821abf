import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { specPath } from "../scripts/generator"

const decisionIds = (node: unknown, out: Set<string>): Set<string> => {
  if (Array.isArray(node)) for (const n of node) decisionIds(n, out)
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      if (key === "x-paykit-decision") for (const d of value as Array<{ id: string }>) out.add(d.id)
      else decisionIds(value, out)
    }
  }
  return out
}

describe("spec/README.md", () => {
  it("lists every x-paykit-decision of the spec", () => {
    const ids = decisionIds(parse(readFileSync(specPath, "utf8")), new Set())
    const readme = readFileSync(new URL("../../../spec/README.md", import.meta.url), "utf8")
    expect(ids.size).toBeGreaterThan(15)
    const missing = [...ids].filter((id) => !readme.includes(`| ${id} |`))
    expect(missing).toEqual([])
  })
})
