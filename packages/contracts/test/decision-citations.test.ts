/**
 * The repository explains itself: every comment or document that cites a decision as
 * `docs/decisions.md#<anchor>` names a heading that docs/decisions.md has (anchors as GitHub makes
 * them from headings), and nothing cites the design notes kept outside the repository.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"

const root = join(import.meta.dirname, "..", "..", "..")
const SKIP = new Set(["node_modules", "dist", ".turbo", "generated", "coverage", "api", "test-artifacts"])
const SOURCE = /\.(ts|mts|cts|mjs|js|md|yaml)$/

function filesUnder(dir: string): Array<string> {
  let names: Array<string>
  try {
    names = readdirSync(dir)
  } catch {
    return []
  }
  return names.flatMap((name) => {
    if (SKIP.has(name) || name.startsWith(".")) return []
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : SOURCE.test(name) ? [path] : []
  })
}

/** GitHub's anchor for a heading: lower case, punctuation but `-` dropped, spaces as `-`. */
const anchorOf = (heading: string): string =>
  heading.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-")

const decisions = readFileSync(join(root, "docs", "decisions.md"), "utf8")
const anchors = new Set(decisions.split("\n").flatMap((line) => /^#{1,6}\s+(.*)$/.exec(line)?.slice(1, 2) ?? []).map(anchorOf))
const files = ["packages", "apps", "fleet", "bench", "stress", "scripts", "docs", "runtimes"].flatMap((d) => filesUnder(join(root, d)))
  .concat([join(root, "README.md")])
  .filter((f) => f !== import.meta.filename)

describe("decision citations", () => {
  it("makes GitHub's anchors from headings", () => {
    expect(anchorOf("10. An order's lifecycle is one ledger")).toBe("10-an-orders-lifecycle-is-one-ledger")
    expect(anchorOf("D13u: Update a recurring payment")).toBe("d13u-update-a-recurring-payment")
  })

  it("finds the repository's sources", () => {
    expect(files.length).toBeGreaterThan(200)
  })

  it("every docs/decisions.md#anchor cited in the repository is a heading of docs/decisions.md", () => {
    const broken: Array<string> = []
    let cited = 0
    for (const file of files) {
      for (const m of readFileSync(file, "utf8").matchAll(/decisions\.md#([\w-]+)/g)) {
        cited++
        if (!anchors.has(m[1]!)) broken.push(`${relative(root, file)}: #${m[1]}`)
      }
    }
    expect(cited).toBeGreaterThan(20)
    expect(broken).toEqual([])
  })

  it("nothing cites the design notes kept outside the repository", () => {
    const outside = files.filter((f) => /\bDESIGN\.md\b/.test(readFileSync(f, "utf8"))).map((f) => relative(root, f))
    expect(outside).toEqual([])
  })
})
