#!/usr/bin/env node
/**
 * `pnpm release`: publishes the five @paykit/* packages to ONE registry, the one it is given, and
 * tags the release commit.
 *
 *   pnpm release --registry https://npm.example.com/        # or the scoped @paykit:registry below
 *   pnpm release --public                                    # the public npm registry: only when said
 *
 * The registry is, in this order: `--registry URL`; the `@paykit:registry` scope's registry from
 * the environment (`npm_config_@paykit:registry`, `NPM_CONFIG_@PAYKIT:REGISTRY`) or from an
 * .npmrc (`pnpm config get @paykit:registry`). With none, it refuses. It refuses the public
 * registry (registry.npmjs.org, registry.yarnpkg.com) unless `--public` is given too, and refuses
 * `--public` with any other registry (so a flag typed out of habit cannot widen a private release).
 * Every `pnpm publish` it runs gets that URL as `--registry` AND as the `@paykit:` scope's registry
 * in its environment, so no .npmrc, publishConfig or default can send a package elsewhere.
 *
 * Steps:
 *   1. the working tree must be clean (unless --allow-dirty);
 *   2. pending changesets: `changeset version`, `pnpm install` (the lockfile follows the bump),
 *      then ONE commit "Release @paykit/* X.Y.Z" holding the bump. No pending changeset: HEAD must
 *      already be a release commit of the packages' version (no tag `@paykit/*@X.Y.Z` elsewhere);
 *   3. build the five packages (turbo) and `pnpm check:packages` (skip: --skip-build, --skip-checks);
 *   4. `pnpm -r publish` of the five, siblings before dependents, skipping a version that the
 *      registry already has (a re-run after a failure publishes the rest); `--provenance` in CI;
 *   5. tags `@paykit/<name>@X.Y.Z` on the release commit (HEAD), the changesets' tag format.
 *      Push them yourself: `git push --follow-tags` (or `git push origin --tags`).
 *
 * Options: --registry URL, --public, --provenance, --tag DIST_TAG (default latest), --otp CODE,
 * --dry-run (pack and print; no commit, publish or tag), --skip-build, --skip-checks,
 * --allow-dirty. (With --dry-run the bump of step 2 is left uncommitted in the working tree.)
 * Last line: `release: published N to URL, tagged COMMIT` (or `release: refused: …`, exit 1).
 */
import { execFileSync } from "node:child_process"
import { existsSync, readFileSync, readdirSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(fileURLToPath(new URL("../..", import.meta.url)))
const argv = process.argv.slice(2)
const flag = (name) => argv.includes(name)
const option = (name) => {
  const i = argv.indexOf(name)
  if (i === -1) return undefined
  const value = argv[i + 1]
  if (value === undefined || value.startsWith("--")) refuse(`${name} needs a value`)
  return value
}
const t0 = Date.now()
const log = (line) => console.log(`${line} (${((Date.now() - t0) / 1000).toFixed(1)} s)`)
const known = new Set(["--registry", "--public", "--provenance", "--tag", "--otp", "--dry-run", "--skip-build", "--skip-checks", "--allow-dirty", "--help"])
for (const [i, a] of argv.entries()) {
  if (a.startsWith("--") && !known.has(a)) refuse(`unknown option ${a}`)
  if (!a.startsWith("--") && !["--registry", "--tag", "--otp"].includes(argv[i - 1])) refuse(`unexpected argument ${a}`)
}
function refuse(why) {
  console.error(`release: refused: ${why}`)
  process.exit(1)
}
if (flag("--help")) {
  console.log(readFileSync(fileURLToPath(import.meta.url), "utf8").split("*/")[0].replace(/^#!.*\n\/\*\*\n?/, "").replace(/^ \* ?/gm, ""))
  process.exit(0)
}

// siblings before dependents
const order = ["contracts", "signing", "client", "testkit", "cli"]
const dryRun = flag("--dry-run")

const run = (cmd, args, opts = {}) =>
  execFileSync(cmd, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 600_000, ...opts })
const show = (cmd, args, opts = {}) => execFileSync(cmd, args, { cwd: root, stdio: "inherit", timeout: 600_000, ...opts })
const git = (...args) => run("git", args).trim()
// pnpm: the one running this script, else the pinned one
const execpath = process.env.npm_execpath ?? ""
const pnpmCmd = /pnpm\.c?js$/.test(execpath) ? [process.execPath, execpath] : ["npx", "-y", "pnpm@10.34.9"]
const pnpm = (args, opts) => run(pnpmCmd[0], [...pnpmCmd.slice(1), ...args], opts)
const pnpmShow = (args, opts) => show(pnpmCmd[0], [...pnpmCmd.slice(1), ...args], opts)

// 0. the registry
const PUBLIC = /^https?:\/\/registry\.(npmjs\.org|yarnpkg\.com|npmjs\.com)(\/|$)/i
const scopedFromEnv = () => {
  for (const [k, v] of Object.entries(process.env)) if (/^npm_config_@paykit:registry$/i.test(k) && v) return { url: v, from: `$${k}` }
  return undefined
}
const scopedFromNpmrc = () => {
  try {
    const v = pnpm(["config", "get", "@paykit:registry"]).trim()
    return v && v !== "undefined" ? { url: v, from: "the @paykit:registry of an .npmrc" } : undefined
  } catch {
    return undefined
  }
}
const given = option("--registry")
const chosen = given !== undefined ? { url: given, from: "--registry" } : (scopedFromEnv() ?? scopedFromNpmrc())
if (chosen === undefined) {
  refuse("no registry named. Give --registry URL, or set the @paykit scope's registry (npmrc `@paykit:registry=URL` or npm_config_@paykit:registry). pnpm release never falls back to a default registry.")
}
let registry
try {
  registry = new URL(chosen.url).href
} catch {
  refuse(`${chosen.from} is not a URL: ${chosen.url}`)
}
const isPublic = PUBLIC.test(registry)
if (isPublic && !flag("--public")) refuse(`${registry} (from ${chosen.from}) is the public registry; add --public to publish there on purpose`)
if (!isPublic && flag("--public")) refuse(`--public given, but the registry is ${registry} (from ${chosen.from})`)
log(`release: registry ${registry} (from ${chosen.from})${dryRun ? ", dry run" : ""}`)

// every child sees the one registry as the @paykit scope's (whatever an .npmrc says), and each
// publish names it with --registry too: nothing can fall back to another. (The default registry
// stays as it is: the lockfile update and the tools still come from where they usually do.)
const env = { ...process.env }
for (const k of Object.keys(env)) if (/^npm_config_@paykit:registry$/i.test(k)) delete env[k]
env["npm_config_@paykit:registry"] = registry

// 1. clean tree
if (!flag("--allow-dirty") && git("status", "--porcelain") !== "") refuse("the working tree has uncommitted changes (commit them, or --allow-dirty)")

const manifests = () => Object.fromEntries(order.map((p) => [p, JSON.parse(readFileSync(join(root, "packages", p, "package.json"), "utf8"))]))
const pending = readdirSync(join(root, ".changeset")).filter((f) => f.endsWith(".md") && f !== "README.md")

// 2. the version bump, committed
if (pending.length > 0) {
  log(`release: ${pending.length} pending changeset(s): changeset version`)
  pnpm(["exec", "changeset", "version"], { env })
  // the lockfile follows the bump (node_modules is left as it is: the packages are built below)
  pnpm(["install", "--lockfile-only", "--reporter=silent"], { env })
}
const versions = new Set(Object.values(manifests()).map((m) => m.version))
if (versions.size !== 1) refuse(`the packages are not at one version: ${[...versions].join(", ")}`)
const [version] = versions
if (pending.length > 0) {
  if (dryRun) log(`release: dry run: the bump to ${version} stays uncommitted`)
  else {
    git("add", "-A")
    git("commit", "-q", "-m", `Release @paykit/* ${version}`, "-m", `changeset version: ${order.map((p) => `@paykit/${p}@${version}`).join(", ")}`)
  }
} else {
  for (const p of order) {
    const tag = `@paykit/${p}@${version}`
    let at
    try {
      at = git("rev-list", "-n", "1", tag)
    } catch {
      continue
    }
    if (at !== git("rev-parse", "HEAD")) refuse(`no pending changeset, and ${tag} already tags ${at.slice(0, 12)}, not HEAD: run \`pnpm changeset\` first`)
  }
}
const commit = git("rev-parse", "HEAD")
log(`release: ${version} from ${commit.slice(0, 12)}${pending.length > 0 && !dryRun ? " (the version bump, just committed)" : ""}`)

// 3. build and check
if (!flag("--skip-build")) pnpmShow(["exec", "turbo", "run", "build", "--filter=./packages/*", "--output-logs=errors-only"], { env })
if (!flag("--skip-checks")) pnpmShow(["check:packages"], { env })

// 4. publish, siblings first
for (const p of order) if (!existsSync(join(root, "packages", p, "dist", "index.js"))) refuse(`packages/${p}/dist/index.js is missing: build first`)
// one `pnpm -r publish` over the five: topological order (siblings first), `workspace:*` written as
// the exact version, and a version the registry already has is skipped (a re-run publishes the rest)
const args = ["-r", ...order.map((p) => `--filter=./packages/${p}`), "publish", "--registry", registry, "--no-git-checks", "--access", "public", "--tag", option("--tag") ?? "latest", "--report-summary"]
// the build ran above (or was skipped on purpose; dist/ checked above): prepack would build again
args.push("--ignore-scripts")
if (flag("--provenance")) args.push("--provenance")
if (option("--otp")) args.push("--otp", option("--otp"))
if (dryRun) args.push("--dry-run")
const summaryFile = join(root, "pnpm-publish-summary.json")
let published = []
try {
  const out = pnpm(args, { env })
  if (process.env.PAYKIT_VERBOSE) console.log(out)
  published = JSON.parse(readFileSync(summaryFile, "utf8")).publishedPackages.map((p) => `${p.name}@${p.version}`)
} catch (e) {
  console.error(`${e.stdout ?? ""}${e.stderr ?? ""}${e.stdout || e.stderr ? "" : e}`)
  refuse(`pnpm publish to ${registry} failed (a re-run skips what was published)`)
} finally {
  rmSync(summaryFile, { force: true })
}
for (const p of published) log(`release: ${dryRun ? "would publish" : "published"} ${p} to ${registry}`)
const skipped = order.map((p) => `@paykit/${p}@${version}`).filter((p) => !published.includes(p))
if (skipped.length > 0) log(`release: already on ${registry}, not published again: ${skipped.join(", ")}`)

// 5. tags on the release commit
if (!dryRun) {
  for (const p of order) {
    const tag = `@paykit/${p}@${version}`
    try {
      git("rev-parse", "-q", "--verify", `refs/tags/${tag}`)
      continue // checked above: it is on HEAD
    } catch {
      git("tag", "-a", tag, "-m", tag, commit)
    }
  }
  log(`release: tags ${order.map((p) => `@paykit/${p}@${version}`).join(" ")} on ${commit.slice(0, 12)}; push them: git push --follow-tags`)
}
console.log(`release: ${dryRun ? "dry run, would publish" : "published"} ${published.length} to ${registry}, ${dryRun ? "no tags" : `tagged ${commit.slice(0, 12)}`}`)
