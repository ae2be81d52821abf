#!/usr/bin/env node
/**
 * check:packages — for every publishable package: pack it with pnpm exactly as it would be
 * published (pnpm applies `publishConfig.exports` and rewrites `workspace:` ranges), check the packed
 * package.json, lint the tarball with publint (strict, suggestions count) and
 * @arethetypeswrong/cli (0 problems allowed), then install the tarballs into scratch projects
 * OUTSIDE the workspace and use them on this Node:
 *
 * Also checks that each package builds on `prepack` (so a pack never ships without dist/), that its
 * source maps inline every source they name (sourcesContent) while src/ itself does not ship, and
 * decision 22: siblings at exactly the package's own version, `effect` a peer (^3.22.0) and never a
 * dependency, an MIT LICENSE and `repository` (with `directory`).
 *
 *   - consumer "all": the five tarballs; require() and import() every entry point, sign a control
 *     digest (also with the installed `paykit sign`), run the installed `paykit-sim --help`, start `paykit-sim --port 0`, read its listening
 *     line and run a sale + awaitFinal through @paykit/client (ESM and CJS) and @paykit/client/promise
 *     (CJS) against it; check that
 *     importing @paykit/client loads none of what its first call loads (effect's Schema modules,
 *     the contracts' Schemas, openapi-fetch): from ESM, the static imports of dist/index.js and its
 *     chunks; from CJS, the modules a fresh `require` leaves in require.cache, before and after a
 *     first sale (docs/decisions.md#22-packages-a-team-installs);
 *   - consumer "no-effect": only the contracts and signing tarballs, with no `effect` installed
 *     (it is an optional peer of @paykit/contracts); require()/import() signing and
 *     @paykit/contracts/operations, sign a control digest, and type-check a NodeNext consumer.
 *
 * Packing runs each package's `prepack` (tsup), so dist/ is always fresh in the tarball; with
 * `--built` (pnpm test, right after turbo's build) it packs the dist/ just built instead of building
 * again. `--keep-tarballs DIR` copies the tarballs there for a later step. Set
 * PAYKIT_KEEP_SCRATCH=1 to keep the scratch directory.
 */
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, posix, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { publint } from "publint"
import { formatMessage } from "publint/utils"

const root = fileURLToPath(new URL("..", import.meta.url))
const packages = ["contracts", "signing", "client", "testkit", "cli"]
const bin = (name) => join(root, "node_modules", ".bin", name)
const run = (cmd, args, cwd, timeout = 300_000) =>
  execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout, killSignal: "SIGKILL" })

// pnpm: the one running this script (npm_execpath), else the pinned one through npx.
const execpath = process.env.npm_execpath ?? ""
const pnpm = /pnpm\.c?js$/.test(execpath)
  ? (args, cwd) => run(process.execPath, [execpath, ...args], cwd)
  : (args, cwd) => run("npx", ["-y", "pnpm@10.34.9", ...args], cwd)

// What importing @paykit/client leaves to its first call (docs/decisions.md#22-packages-a-team-installs).
const COLD_DEFERRED_ESM = ["effect/Schema", "effect/ParseResult", "effect/SchemaAST", "@paykit/contracts", "openapi-fetch"]
const COLD_DEFERRED_CJS = String.raw`/[\\/]effect[\\/]dist[\\/]cjs[\\/](Schema|ParseResult|SchemaAST)\.js$|[\\/]@paykit[\\/]contracts[\\/]dist[\\/]index\.cjs$|[\\/]openapi-fetch[\\/]/`

/**
 * The packages an ES module loads by static import, following its relative imports (a bundle's
 * chunks) but not `import()`: what importing it loads before any of its code runs.
 */
function staticEsmImports(file, seen = new Set(), packages = new Set()) {
  if (seen.has(file)) return packages
  seen.add(file)
  const text = readFileSync(file, "utf8")
  // top-level `import … from "x"`, `export … from "x"` and `import "x"` (esbuild writes them at the
  // start of a line); `import("x")` has no space after `import` and is not matched
  for (const m of text.matchAll(/^(?:import|export)\s(?:[^;"]*?\sfrom\s*)?"([^"]+)"/gm)) {
    const specifier = m[1]
    if (specifier.startsWith(".")) staticEsmImports(posix.join(posix.dirname(file.replaceAll("\\", "/")), specifier), seen, packages)
    else packages.add(specifier)
  }
  return packages
}

/**
 * Checks the source maps of an unpacked package: each dist/*.js|cjs|mjs ends with a
 * sourceMappingURL naming a shipped .map; each map inlines the text of every source it names
 * (sourcesContent), and the sources themselves do not ship (no src/: they would ship twice), so a
 * stack trace under --enable-source-maps or a debugger shows the TypeScript line from the map alone.
 */
function checkSourceMaps(pkgDir, files) {
  const problems = []
  const shippedSet = new Set(files)
  let scripts = 0
  let sources = 0
  const maps = new Set()
  for (const file of files.filter((f) => /^dist\/.*\.(c|m)?js$/.test(f))) {
    scripts++
    const text = readFileSync(join(pkgDir, file), "utf8")
    const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1]
    if (url === undefined) {
      problems.push(`${file}: no sourceMappingURL`)
      continue
    }
    const mapFile = posix.normalize(posix.join(posix.dirname(file), url))
    if (!shippedSet.has(mapFile)) problems.push(`${file}: names ${url}, which is not in the package`)
    else maps.add(mapFile)
  }
  for (const mapFile of maps) {
    const map = JSON.parse(readFileSync(join(pkgDir, mapFile), "utf8"))
    map.sources.forEach((source, i) => {
      sources++
      if (typeof map.sourcesContent?.[i] !== "string" || map.sourcesContent[i].length === 0) problems.push(`${mapFile}: no sourcesContent for ${source}`)
    })
  }
  if (maps.size === 0) problems.push("no source maps at all")
  const twice = files.filter((f) => /^src\//.test(f))
  if (twice.length > 0) problems.push(`sources shipped beside the maps that inline them: ${twice.slice(0, 3).join(", ")}…`)
  return { problems, scripts, maps: maps.size, sources }
}

const argValue = (flag) => {
  const i = process.argv.indexOf(flag)
  return i === -1 ? undefined : process.argv[i + 1]
}
const built = process.argv.includes("--built")
const keepTarballs = argValue("--keep-tarballs") === undefined ? undefined : resolve(argValue("--keep-tarballs"))
if (keepTarballs !== undefined) rmSync(keepTarballs, { recursive: true, force: true })
const scratch = mkdtempSync(join(tmpdir(), "paykit-packages-"))
const tarballs = {}
let problems = 0
const fail = (what, detail = "") => {
  problems++
  console.error(`✗ ${what}${detail ? `\n${detail}` : ""}`)
}
const errText = (e) => `${e.stdout ?? ""}${e.stderr ?? ""}${e.stdout || e.stderr ? "" : String(e)}`

try {
  // 1. pack, inspect, publint, attw
  for (const pkg of packages) {
    const dir = join(root, "packages", pkg)
    const { name, version } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))
    if (!/\btsup\b/.test(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).scripts?.prepack ?? "")) {
      fail(`${name}: no prepack build — a pack could ship without dist/`)
    }
    const dest = join(scratch, "tarballs", pkg)
    mkdirSync(dest, { recursive: true })
    // `--built`: the caller has just built every dist/ (pnpm test runs turbo's build first), so the
    // pack skips the prepack build it would repeat; the prepack script is still checked above.
    pnpm(built ? ["--config.ignore-scripts=true", "pack", "--pack-destination", dest] : ["pack", "--pack-destination", dest], dir)
    const tgz = readdirSync(dest).find((f) => f.endsWith(".tgz"))
    if (tgz === undefined) {
      fail(`${name}: pnpm pack produced no tarball`)
      continue
    }
    tarballs[name] = join(dest, tgz)
    // `--keep-tarballs DIR`: the tarballs for a later step (pnpm test hands them to test:runtimes).
    if (keepTarballs !== undefined) {
      mkdirSync(keepTarballs, { recursive: true })
      copyFileSync(tarballs[name], join(keepTarballs, tgz))
    }

    // the published package.json: no source condition, no workspace ranges, no src/ targets
    const unpacked = join(dest, "unpacked")
    mkdirSync(unpacked)
    run("tar", ["-xzf", tarballs[name], "-C", unpacked], dest)
    const manifestText = readFileSync(join(unpacked, "package", "package.json"), "utf8")
    const manifest = JSON.parse(manifestText)
    const files = run("tar", ["-tzf", tarballs[name]], dest).trim().split("\n").map((f) => f.replace(/^package\//, ""))
    const entryFields = JSON.stringify([manifest.exports, manifest.main, manifest.module, manifest.types, manifest.typesVersions, manifest.bin])
    // src/ does not ship: the source maps inline it (checked below)
    const shipped = /^(dist\/|bin\/|package\.json$|README\.md$|CHANGELOG\.md$|LICENSE$)/
    // decision 22: one version group, each package requiring its siblings at exactly its own
    // version; effect a peer (^3.22) wherever it is used, never a dependency; LICENSE, repository
    const siblings = Object.entries({ ...manifest.dependencies, ...manifest.peerDependencies }).filter(([d]) => d.startsWith("@paykit/"))
    const bad = [
      siblings.some(([, range]) => range !== version) && `siblings not at exactly ${version}: ${JSON.stringify(Object.fromEntries(siblings))}`,
      manifest.dependencies?.effect !== undefined && `effect as a dependency (${manifest.dependencies.effect}), not a peer`,
      pkg !== "signing" && manifest.peerDependencies?.effect !== "^3.22.0" && `effect peer ${manifest.peerDependencies?.effect}, not ^3.22.0`,
      !files.includes("LICENSE") && "no LICENSE",
      !/^MIT License\n\nCopyright \(c\) \d{4} PayKit contributors/.test(existsSync(join(unpacked, "package", "LICENSE")) ? readFileSync(join(unpacked, "package", "LICENSE"), "utf8") : "") && "a LICENSE that is not MIT, PayKit contributors",
      manifest.license !== "MIT" && `license ${manifest.license}`,
      (manifest.repository?.url === undefined || manifest.repository?.directory !== `packages/${pkg}`) && `repository ${JSON.stringify(manifest.repository)}`,
      entryFields.includes("@paykit/source") && "the @paykit/source condition",
      manifestText.includes("workspace:") && "a workspace: range",
      /"\.?\/?src\//.test(entryFields) && "an entry point in src/",
      files.some((f) => !shipped.test(f)) && `unexpected files: ${files.filter((f) => !shipped.test(f)).join(", ")}`
    ].filter(Boolean)
    if (bad.length > 0) fail(`${name}: packed package.json/files hold ${bad.join("; ")}`)
    else console.log(`${name}@${version}: packed ${files.length} files; exports ${Object.keys(manifest.exports).join(" ")}; deps ${JSON.stringify(manifest.dependencies ?? {})}${manifest.peerDependencies ? ` peers ${JSON.stringify(manifest.peerDependencies)}` : ""}`)

    // source maps: every emitted script names a map that ships; every source a map names ships
    // too, with the map's inlined sourcesContent equal to it, so a stack trace or a debugger never
    // points at a file that is not in the package
    const maps = checkSourceMaps(join(unpacked, "package"), files)
    if (maps.problems.length > 0) fail(`${name}: source maps`, maps.problems.slice(0, 10).map((p) => `  ${p}`).join("\n"))
    else console.log(`${name}: ${maps.scripts} scripts → ${maps.maps} source maps → ${maps.sources} sources, each inlined (sourcesContent), src/ not shipped`)

    // publint on the tarball itself (no re-pack, so it sees what pnpm would publish)
    const tarball = readFileSync(tarballs[name])
    const { messages, pkg: linted } = await publint({
      pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) },
      level: "suggestion",
      strict: true
    })
    if (messages.length > 0) fail(`${name}: publint`, messages.map((m) => `  ${m.type}: ${formatMessage(m, linted)}`).join("\n"))
    else console.log(`${name}: publint 0 problems (strict, suggestions included)`)

    // attw on the same tarball, default (strict) profile: node10, node16 from CJS and from ESM,
    // bundler. (node10 finds `@paykit/contracts/operations` through `typesVersions`.)
    try {
      const report = run(bin("attw"), [tarballs[name], "--format", "table-flipped"], dest)
      console.log(`${name}: attw 0 problems (node10, node16-cjs, node16-esm, bundler)`)
      if (process.env.PAYKIT_VERBOSE) console.log(report)
    } catch (e) {
      fail(`${name}: attw`, errText(e))
    }
  }

  if (Object.keys(tarballs).length !== packages.length) throw new Error("not every package was packed")

  const consumer = (dir, deps, devDeps = {}) => {
    mkdirSync(dir, { recursive: true })
    const file = (n) => `file:${tarballs[n]}`
    const dependencies = Object.fromEntries(deps.map((n) => [n, file(n)]))
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify(
        // overrides: a tarball's dependency on another @paykit package resolves to its tarball too
        { name: "consumer", private: true, dependencies: { ...dependencies, ...devDeps }, pnpm: { overrides: dependencies } },
        null,
        2
      )
    )
    pnpm(["install", "--ignore-workspace", "--no-frozen-lockfile", "--config.auto-install-peers=true", "--reporter=silent"], dir)
  }
  const node = (dir, file, args = []) => {
    try {
      process.stdout.write(`${run(process.execPath, [file, ...args], dir, 60_000).trimEnd().replace(/^/gm, "  ")}\n`)
    } catch (e) {
      fail(`${file} failed`, errText(e))
    }
  }

  // 2. consumer "all": every tarball
  const all = join(scratch, "consumer-all")
  consumer(all, Object.keys(tarballs))
  const entries = ["@paykit/contracts", "@paykit/contracts/operations", "@paykit/contracts/card-data", "@paykit/signing", "@paykit/client", "@paykit/client/promise", "@paykit/testkit", "@paykit/cli"]
  const signCheck = `
const digest = signing.signControl("SALE", { client_orderid: "902B4FF5", amount: "10.42", currency: "USD", email: "john.smith@gmail.com" }, { key: "B17F59B4-A7DC-41B4-8FF9-37D986B43D20", endpointId: 1111 })
if (digest !== "c6bdd88a78834ef4b863b088827a459f039e8257") throw new Error("signControl gave " + digest)
console.log("signControl(SALE) = " + digest)`
  const saleFlow = `
async function saleAgainst(baseUrl, createPayClient, label) {
  const pay = createPayClient({ baseUrl, login: "paykit-test", controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F", endpointId: 1001, poll: { fastIntervalMs: 100 } })
  const client_orderid = label + "-" + Date.now()
  const ack = await pay.sale({ client_orderid, order_desc: "smoke", amount: "10.00", currency: "USD", address1: "1 Main St",
    city: "Springfield", zip_code: "12345", country: "US", phone: "5551234567", email: "john@example.com", ipaddress: "127.0.0.1",
    card_printed_name: "JOHN DOE", credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2030", cvv2: "123",
    redirect_url: "https://shop.example.com/return" })
  const final = await pay.awaitFinal({ client_orderid, orderid: ack["paynet-order-id"] })
  if (final.status !== "approved") throw new Error(label + ": sale ended " + JSON.stringify(final))
  console.log(label + ": sale " + ack["paynet-order-id"] + " → " + final.status + " (client against the simulator at " + baseUrl + ")")
}`
  writeFileSync(
    join(all, "smoke.cjs"),
    `"use strict"
for (const n of ${JSON.stringify(entries)}) {
  const m = require(n)
  if (Object.keys(m).length === 0) throw new Error(n + ": empty CJS exports")
  console.log("require " + n + ": " + Object.keys(m).length + " exports")
}
const signing = require("@paykit/signing")
${signCheck}
${saleFlow}
const { createSimulator } = require("@paykit/testkit")
const { createPayClient } = require("@paykit/client")
;(async () => {
  const sim = createSimulator({ clock: "real", processingDelayMs: 200 })
  const server = await sim.listen({ port: 0 })
  try {
    await saleAgainst(server.url, createPayClient, "cjs")
    await saleAgainst(server.url, require("@paykit/client/promise").createPayClient, "cjs, @paykit/client/promise")
  } finally { await sim.close() }
})().catch((e) => { console.error(e); process.exit(1) })
`
  )
  writeFileSync(
    join(all, "smoke.mjs"),
    `for (const n of ${JSON.stringify(entries)}) {
  const m = await import(n)
  if (Object.keys(m).length === 0) throw new Error(n + ": empty ESM exports")
  console.log("import " + n + ": " + Object.keys(m).length + " exports")
}
// ES modules: the Promise entry hands out the main entry's very error classes (shared chunks;
// the CommonJS build bundles each entry whole, so there they are copies)
if ((await import("@paykit/client/promise")).InputError !== (await import("@paykit/client")).InputError) throw new Error("import @paykit/client/promise: its InputError is not @paykit/client's")
const signing = await import("@paykit/signing")
${signCheck}
${saleFlow}
// the installed bin, as a user runs it: --help, then a server on port 0
import { execFileSync, spawn } from "node:child_process"
const bin = "node_modules/.bin/paykit-sim"
const help = execFileSync(bin, ["--help"], { encoding: "utf8" }).trim()
if (!help.startsWith("paykit-sim")) throw new Error("paykit-sim --help printed " + help)
console.log("paykit-sim --help: " + help)
const child = spawn(bin, ["--port", "0"], { stdio: ["ignore", "pipe", "inherit"] })
const url = await new Promise((resolve, reject) => {
  let out = ""
  let done = false
  const timer = setTimeout(() => reject(new Error("paykit-sim printed no listening line in 15 s: " + out)), 15000)
  child.stdout.on("data", (d) => {
    out += d
    const m = /listening on (http:\\/\\/\\S+)/.exec(out)
    if (m && !done) { done = true; clearTimeout(timer); console.log("paykit-sim --port 0: " + out.split("\\n")[0]); resolve(m[1]) }
  })
  child.on("exit", (code) => reject(new Error("paykit-sim exited " + code + ": " + out)))
})
// the installed paykit bin signs the published sale example
const signed = execFileSync("node_modules/.bin/paykit", ["sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"], { encoding: "utf8" }).trim()
if (signed !== "c6bdd88a78834ef4b863b088827a459f039e8257") throw new Error("paykit sign printed " + signed)
console.log("paykit sign SALE: " + signed)
try {
  const { createPayClient } = await import("@paykit/client")
  await saleAgainst(url, createPayClient, "esm")
} finally {
  child.removeAllListeners("exit")
  child.kill("SIGTERM")
}
`
  )
  writeFileSync(
    join(all, "cold.cjs"),
    `"use strict"
const deferred = ${COLD_DEFERRED_CJS}
const loaded = () => Object.keys(require.cache).filter((f) => deferred.test(f)).map((f) => f.replace(/^.*node_modules[\\/]/, ""))
const { createPayClient } = require("@paykit/client")
const atRequire = loaded()
if (atRequire.length > 0) throw new Error("require('@paykit/client') loaded " + atRequire.join(", "))
const reply = { type: "async-response", status: "processing", "serial-number": "sn-1", "merchant-order-id": "cold-1", "paynet-order-id": "123" }
const pay = createPayClient({ baseUrl: "http://127.0.0.1:9", login: "cold", controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F", endpointId: 1001,
  fetch: async () => new Response(JSON.stringify(reply), { status: 200, headers: { "Content-Type": "application/vnd.pay+json" } }) })
pay.sale({ client_orderid: "cold-1", order_desc: "cold", amount: "10.00", currency: "USD", address1: "1 Main St", city: "Springfield",
  zip_code: "12345", country: "US", phone: "5551234567", email: "john@example.com", ipaddress: "127.0.0.1", card_printed_name: "JOHN DOE",
  credit_card_number: "4111111111111111", expire_month: "12", expire_year: "2030", cvv2: "123", redirect_url: "https://shop.example.com/return" })
  .then((r) => {
    if (r.status !== "processing") throw new Error("first sale answered " + JSON.stringify(r))
    // the check sees these modules once they load: the first call loads them
    const afterCall = loaded()
    if (afterCall.length < 3) throw new Error("the first sale loaded only " + afterCall.join(", "))
    console.log("require @paykit/client loads none of effect/Schema, the contracts' Schemas, openapi-fetch; its first sale loads " + afterCall.length + " of them")
  })
  .catch((e) => { console.error(e); process.exit(1) })
`
  )
  console.log(`consumer with all five tarballs (${all}):`)
  node(all, "smoke.cjs")
  node(all, "smoke.mjs")
  node(all, "cold.cjs")
  const coldEsm = staticEsmImports(join(all, "node_modules", "@paykit", "client", "dist", "index.js"))
  const deferredEsm = [...coldEsm].filter((s) => COLD_DEFERRED_ESM.includes(s))
  if (deferredEsm.length > 0) fail("import @paykit/client loads what its first call should", `  dist/index.js and its chunks import ${deferredEsm.join(", ")}`)
  else if (!coldEsm.has("effect/Effect")) fail("import @paykit/client: the static-import walk found no effect/Effect (it reads nothing)")
  else console.log(`  import @paykit/client: ${coldEsm.size} packages by static import, none of ${COLD_DEFERRED_ESM.join(", ")}`)

  // 3. consumer "no-effect": signing + contracts only; effect must be absent and unneeded
  const lean = join(scratch, "consumer-no-effect")
  consumer(lean, ["@paykit/contracts", "@paykit/signing"], { "@types/node": "^20.19.0" })
  const noEffect = `
let hasEffect = true
try { require.resolve("effect", { paths: [process.cwd()] }) } catch { hasEffect = false }
if (hasEffect) throw new Error("effect is installed in the no-effect consumer")`
  writeFileSync(
    join(lean, "smoke.cjs"),
    `"use strict"${noEffect}
const signing = require("@paykit/signing")
const { operations } = require("@paykit/contracts/operations")
if (!operations.SALE) throw new Error("no SALE row")
const { maskPan } = require("@paykit/contracts/card-data")
if (maskPan("4111111111111111") !== "411111******1111") throw new Error("maskPan gave " + maskPan("4111111111111111"))
${signCheck}
console.log("require without effect: @paykit/signing (" + Object.keys(signing).length + " exports), @paykit/contracts/operations, @paykit/contracts/card-data")
`
  )
  writeFileSync(
    join(lean, "smoke.mjs"),
    `import { createRequire } from "node:module"
const require = createRequire(import.meta.url)${noEffect}
const signing = await import("@paykit/signing")
const { operations } = await import("@paykit/contracts/operations")
if (!operations.SALE) throw new Error("no SALE row")
const { maskPan } = await import("@paykit/contracts/card-data")
if (maskPan("4111111111111111") !== "411111******1111") throw new Error("maskPan gave " + maskPan("4111111111111111"))
${signCheck}
console.log("import without effect: @paykit/signing (" + Object.keys(signing).length + " exports), @paykit/contracts/operations, @paykit/contracts/card-data")
`
  )
  writeFileSync(
    join(lean, "check.mts"),
    `import { signControl, type ControlValues } from "@paykit/signing"
import { operations, type OperationId } from "@paykit/contracts/operations"
import { maskPans } from "@paykit/contracts/card-data"
export const masked: string = maskPans("card 4111111111111111")
const op: OperationId = "SALE"
const values: ControlValues = { client_orderid: "1", amount: "1.00", currency: "USD", email: "a@b.c" }
export const digest: string = signControl(op, values, { key: "k", endpointId: 1 })
export const row = operations[op]
`
  )
  writeFileSync(
    join(lean, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, types: ["node"] }, files: ["check.mts"] })
  )
  console.log(`consumer with only contracts + signing, no effect (${lean}):`)
  node(lean, "smoke.cjs")
  node(lean, "smoke.mjs")
  try {
    run(bin("tsc"), ["-p", "tsconfig.json"], lean)
    console.log("  tsc (NodeNext, skipLibCheck false) type-checks a signing consumer without effect")
  } catch (e) {
    fail("tsc in the no-effect consumer", errText(e))
  }
} catch (e) {
  fail("check:packages aborted", errText(e))
} finally {
  if (process.env.PAYKIT_KEEP_SCRATCH) console.log(`scratch kept: ${scratch}`)
  else rmSync(scratch, { recursive: true, force: true })
}
console.log(problems === 0 ? "check:packages: 0 problems" : `check:packages: ${problems} problem(s)`)
process.exit(problems === 0 ? 0 : 1)
