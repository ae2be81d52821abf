/**
 * The simulator's folders are floors: a file imports its own folder or a lower floor, never a
 * sibling folder on its floor and never a floor above (type-only imports count too). A new folder
 * must be given its floor here; a folder holds at most 15 files; no two files import each other,
 * even through others.
 */
import { readFileSync, readdirSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const SRC = fileURLToPath(new URL("../src", import.meta.url))

/** Bottom first. `.` is the package's face: `index.ts` and the `paykit-sim` program `cli.ts`. */
const FLOORS: ReadonlyArray<ReadonlyArray<string>> = [
  ["ledger", "clock", "fixtures"], // pure money rules, the clock and its queue, request fixtures
  ["http"], // the wire: replies, form parsing, the request log, edge limits, addresses
  ["auth", "rules", "proxy"], // signatures; test cards, 3DS, faults; the checking proxy
  ["callbacks", "state"], // callback delivery; orders, card refs, retention, views
  ["engine"], // the simulator's state over time
  ["snapshot", "hosted-pages"], // save and restore; the customer's pages
  ["operations", "test-routes"], // the gateway's operations; the /__sim JSON routes
  ["dashboard"], // the /__sim/ui page over the test routes
  ["server"], // dispatch and the node:http server
  ["simulator"], // createSimulator
  ["."]
]

const floorOf = new Map(FLOORS.flatMap((folders, floor) => folders.map((folder) => [folder, floor] as const)))

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? sources(path) : name.endsWith(".ts") ? [path] : []
  })
}

const files = sources(SRC)

/** The package's files `file` imports (static, type-only, re-exports and dynamic imports alike). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8")
  const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']*)["']/g)].map((m) => m[1]!)
  return specs.map((spec) => {
    const base = resolve(dirname(file), spec).replace(/\.ts$/, "")
    const found = [`${base}.ts`, join(base, "index.ts")].find((path) => files.includes(path))
    if (found === undefined) throw new Error(`${relative(SRC, file)}: cannot resolve ${spec}`)
    return found
  })
}

/** The top folder of a file under src/ (`.` for the files at the top). */
function folderOf(file: string): string {
  const parts = relative(SRC, file).split("/")
  return parts.length === 1 ? "." : parts[0]!
}

const graph = new Map(files.map((file) => [file, importsOf(file)]))

describe("testkit source layout", () => {
  it("gives every folder a floor", () => {
    const unplaced = [...new Set(files.map(folderOf))].filter((folder) => !floorOf.has(folder))
    expect(unplaced).toEqual([])
  })

  it("imports only down a floor or within a folder", () => {
    const wrong: string[] = []
    for (const [file, targets] of graph) {
      const from = folderOf(file)
      for (const target of targets) {
        const to = folderOf(target)
        if (to !== from && floorOf.get(to)! >= floorOf.get(from)!) wrong.push(`${relative(SRC, file)} → ${relative(SRC, target)}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it("has no import cycle between files", () => {
    const cycles: string[] = []
    const state = new Map<string, "open" | "done">()
    const visit = (file: string, path: string[]): void => {
      if (state.get(file) === "done") return
      if (state.get(file) === "open") {
        cycles.push([...path.slice(path.indexOf(file)), file].map((f) => relative(SRC, f)).join(" → "))
        return
      }
      state.set(file, "open")
      for (const target of graph.get(file)!) visit(target, [...path, file])
      state.set(file, "done")
    }
    for (const file of files) visit(file, [])
    expect(cycles).toEqual([])
  })

  it("keeps each folder to 15 files or fewer, and only the package's face at the top", () => {
    const counts = new Map<string, number>()
    for (const file of files) counts.set(dirname(relative(SRC, file)), (counts.get(dirname(relative(SRC, file))) ?? 0) + 1)
    expect([...counts].filter(([, n]) => n > 15)).toEqual([])
    expect(files.filter((f) => folderOf(f) === ".").map((f) => relative(SRC, f)).sort()).toEqual(["cli.ts", "index.ts"])
  })
})
