/**
 * What importing `@paykit/client` loads (docs/decisions.md#22-packages-a-team-installs): the public
 * entry's static imports, followed through the sources, reach none of the modules a call needs
 * later (effect's Schema modules, the contracts' Schemas, openapi-fetch, the call engine); those
 * are reached only through the `import()`s that load them on first use. Static imports are what an
 * ES module import loads, and what the built chunks of `index.js` import (tsup keeps each dynamic
 * import a chunk of its own); `check-packages.mjs` checks the built package the same way.
 */
import { readFileSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const src = resolve(dirname(fileURLToPath(import.meta.url)), "../src")

/** What must wait for a call: heavy modules of other packages, and the client's own engine. */
const DEFERRED_PACKAGES = ["effect/Schema", "effect/ParseResult", "effect/SchemaAST", "@paykit/contracts", "openapi-fetch"]
const DEFERRED_SOURCES = ["client-engine.ts", "call/pipeline.ts", "operations/table.ts", "callbacks/callback-fields.ts"]

interface Reached {
  readonly files: ReadonlySet<string>
  readonly packages: ReadonlySet<string>
}

/**
 * Every file and package reached from `entry` by imports that load a module: `import … from`,
 * `export … from` and bare `import "…"`, not `import type`/`export type` (erased). With
 * `verbatimModuleSyntax`, an import of inline `type` names only still loads its module, so it counts.
 * `dynamic` also follows `import("…")`.
 */
function reach(entry: string, dynamic: boolean): Reached {
  const files = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true)
    const specifiers: Array<string> = []
    const walk = (node: ts.Node) => {
      if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text)
      if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text)
      if (dynamic && ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
        const [arg] = node.arguments
        if (arg !== undefined && ts.isStringLiteral(arg)) specifiers.push(arg.text)
      }
      // `typeof import("…")` is a type: not followed
      if (!ts.isImportTypeNode(node)) ts.forEachChild(node, walk)
    }
    walk(source)
    for (const specifier of specifiers) {
      if (!specifier.startsWith(".")) packages.add(specifier)
      else visit(resolveSource(dirname(file), specifier))
    }
  }
  visit(entry)
  return { files, packages }
}

function resolveSource(from: string, specifier: string): string {
  const base = resolve(from, specifier)
  for (const candidate of [base, `${base}.ts`, resolve(base, "index.ts")]) {
    try {
      if (readFileSync(candidate, "utf8") !== undefined) return candidate
    } catch {
      // not this one
    }
  }
  throw new Error(`cannot resolve ${specifier} from ${from}`)
}

const relative = (files: ReadonlySet<string>) => [...files].map((f) => f.slice(src.length + 1))

describe("importing @paykit/client", () => {
  const atImport = reach(resolve(src, "index.ts"), false)
  const withFirstUse = reach(resolve(src, "index.ts"), true)

  it("loads none of what a call needs later", () => {
    expect([...atImport.packages].filter((p) => DEFERRED_PACKAGES.includes(p))).toEqual([])
    expect(relative(atImport.files).filter((f) => DEFERRED_SOURCES.includes(f))).toEqual([])
    // Effect by module, never the barrel
    expect(atImport.packages.has("effect")).toBe(false)
  })

  it("reaches all of it through the imports that load it on first use", () => {
    // the walk above is the one that finds them: without the `import()`s it would report them
    expect(DEFERRED_PACKAGES.filter((p) => !withFirstUse.packages.has(p))).toEqual([])
    expect(DEFERRED_SOURCES.filter((f) => !relative(withFirstUse.files).includes(f))).toEqual([])
  })
})

/** What the Promise facade's own entry leaves to a client's first call: the Effect runtime and API. */
const PROMISE_DEFERRED_PACKAGES = [...DEFERRED_PACKAGES, "effect/Effect", "effect/Layer", "effect/Schedule", "effect/Config", "effect/Fiber"]
const PROMISE_DEFERRED_SOURCES = [...DEFERRED_SOURCES, "promise.ts", "client.ts", "config-env.ts", "callbacks/handler.ts", "transport/run-promise.ts"]

describe("importing @paykit/client/promise", () => {
  const atImport = reach(resolve(src, "promise-entry.ts"), false)
  const withFirstUse = reach(resolve(src, "promise-entry.ts"), true)

  it("loads no Effect runtime, no Effect service and nothing a call needs later", () => {
    expect([...atImport.packages].filter((p) => PROMISE_DEFERRED_PACKAGES.includes(p))).toEqual([])
    expect(relative(atImport.files).filter((f) => PROMISE_DEFERRED_SOURCES.includes(f))).toEqual([])
    expect(atImport.packages.has("effect")).toBe(false)
  })

  it("reaches the facade and all it runs through the import that loads it on first use", () => {
    expect(PROMISE_DEFERRED_PACKAGES.filter((p) => !withFirstUse.packages.has(p))).toEqual([])
    expect(PROMISE_DEFERRED_SOURCES.filter((f) => !relative(withFirstUse.files).includes(f))).toEqual([])
  })
})
