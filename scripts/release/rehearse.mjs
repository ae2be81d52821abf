#!/usr/bin/env node
/**
 * `pnpm release:rehearse`: the release, rehearsed end to end against a real registry on loopback,
 * then used the way a consuming team uses it.
 *
 *   1. Verdaccio 6 (this project's devDependency) on 127.0.0.1, storage in a temp dir, no uplinks:
 *      it serves only what is published to it; the consumers get everything else (effect,
 *      openapi-fetch, …) from their usual registry, as a team with a private scope does;
 *   2. a temp git repository holding this working tree (tracked and untracked files, not ignored
 *      ones) with each package's built dist/ (built here by turbo: a cache hit after `pnpm build`);
 *   3. there, `pnpm release` (scripts/release/release.mjs) twice: first with the scope's registry
 *      set to the public registry (it must refuse and publish nothing), then with the scope's
 *      registry named the usual way in an npmrc (`@paykit:registry=…` + token): `changeset version`,
 *      install, the version-bump commit, publish of the five packages, tags. Checks: the five are on
 *      Verdaccio at the new version, each requiring its siblings at exactly that version and
 *      `effect` as a peer; the five tags point at HEAD, which is the commit holding the bump;
 *   4. consumers, in fresh projects under the temp dir (outside the workspace), the scope mapped to
 *      Verdaccio by an npmrc: an npm project (effect 3.22.4) and a pnpm project (effect 3.22.0, the
 *      floor of the peer range); `npx -p @paykit/testkit paykit-sim --port 0` from an empty folder is
 *      the running simulator; `npx -p @paykit/cli paykit sign …` from an empty folder; in each
 *      project, on Node 20/22/24 (the runtimes project's binaries), Bun and Deno, the runtimes
 *      scenario (runtimes/scenario.mjs: signing vectors, a sale, its awaitFinal and status through
 *      the Promise facade over ESM, the simulator inside the runtime with a callback through the
 *      client's handler); on Node 20, the CommonJS consumer (consumer-cjs.cjs) and the Effect API
 *      consumer (consumer-effect.mjs: sale, awaitFinal, status, callback) and the installed `paykit`
 *      bin (`paykit status` against the simulator);
 *   5. an app on effect 3.21: pnpm must warn about the unmet `effect` peer and npm must refuse
 *      (ERESOLVE) — the package manager tells the team; and importing @paykit/client there warns
 *      once (PAYKIT_EFFECT_VERSION, @paykit/contracts' run-time check).
 *
 * Last line: `release: published 5, consumers N ok` (exit 0), or with `M FAIL` (exit 1).
 * Options: --only node20,bun,… (runtimes), --skip-build, --verbose, PAYKIT_KEEP_SCRATCH=1.
 * Leaves no process running: Verdaccio and paykit-sim lead their own process groups, killed at exit.
 */
import { execFileSync, spawn } from "node:child_process"
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = resolve(here, "../..")
const argv = process.argv.slice(2)
const option = (name) => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}
const verbose = argv.includes("--verbose")
const t0 = Date.now()
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)} s`
const PACKAGES = ["contracts", "signing", "client", "testkit", "cli"]

const run = (cmd, args, cwd, { env = process.env, timeout = 300_000 } = {}) =>
  execFileSync(cmd, args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout, killSignal: "SIGKILL" })
const errText = (e) => `${e.stdout ?? ""}${e.stderr ?? ""}${e.stdout || e.stderr ? "" : String(e)}`.trim()
const execpath = process.env.npm_execpath ?? ""
const pnpmCmd = /pnpm\.c?js$/.test(execpath) ? [process.execPath, execpath] : ["npx", "-y", "pnpm@10.34.9"]

const runtimesDir = join(root, "runtimes")
const RUNTIMES = [
  { id: "node20", command: process.execPath, args: [] },
  { id: "node22", command: join(runtimesDir, "node_modules", "node22", "bin", "node"), args: [] },
  { id: "node24", command: join(runtimesDir, "node_modules", "node24", "bin", "node"), args: [] },
  { id: "bun", command: join(runtimesDir, "node_modules", ".bin", "bun"), args: ["run"] },
  { id: "deno", command: join(runtimesDir, "node_modules", ".bin", "deno"), args: ["run", "--allow-all", "--quiet"] }
]
const only = option("--only")?.split(",")
const runtimes = only ? RUNTIMES.filter((r) => only.includes(r.id)) : RUNTIMES
const sharedVectors = resolve(root, "..", "shared", "vectors")
const fullVectorsDir = existsSync(join(sharedVectors, "control.json")) ? sharedVectors : join(root, "packages/signing/test/vectors")

const killGroup = (child, signal = "SIGTERM") => {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // gone already
  }
}
const children = []
function startUntil(cmd, args, cwd, pattern, env = process.env, timeoutMs = 60_000) {
  const child = spawn(cmd, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  children.push(child)
  let out = ""
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${cmd} ${args.join(" ")}: no ${pattern} in ${timeoutMs / 1000} s: ${out}`)), timeoutMs)
    const onData = (d) => {
      out += d
      const m = pattern.exec(out)
      if (m) {
        clearTimeout(timer)
        resolvePromise({ child, match: m })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`${cmd} ${args.join(" ")} exited ${code}: ${out}`))
    })
  })
}
function spawnCollect(cmd, args, cwd, env = process.env, timeoutMs = 120_000) {
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd, env: { ...env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"], detached: true })
    children.push(child)
    let out = ""
    let err = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (err += d))
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), timeoutMs)
    child.on("error", (e) => {
      clearTimeout(timer)
      resolvePromise({ code: -1, out, err: `${err}${e}` })
    })
    child.on("exit", (code, signal) => {
      clearTimeout(timer)
      resolvePromise({ code: signal ? `${signal}${signal === "SIGKILL" ? ` (timed out after ${timeoutMs / 1000} s)` : ""}` : code, out, err })
    })
  })
}
const freePort = () =>
  new Promise((resolvePromise, reject) => {
    const server = createServer()
    server.on("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolvePromise(port))
    })
  })

const results = [] // { name, ok, detail }
const record = (name, ok, detail = "") => {
  results.push({ name, ok, detail })
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? ` — ${ok ? detail : detail.split("\n").slice(0, 15).join("\n     ")}` : ""}`)
}
let published = 0
let consumersFrom = Infinity // the results from here on are the consumers' checks
const scratch = mkdtempSync(join(tmpdir(), "paykit-release-"))

try {
  // 0. the built packages (turbo: a cache hit when `pnpm build` ran)
  if (!argv.includes("--skip-build")) {
    run(pnpmCmd[0], [...pnpmCmd.slice(1), "exec", "turbo", "run", "build", "--filter=./packages/*", "--output-logs=errors-only"], root, { timeout: 900_000 })
  }
  for (const p of PACKAGES) if (!existsSync(join(root, "packages", p, "dist", "index.js"))) throw new Error(`packages/${p}/dist is missing: build first`)

  // a few cases of each vector file: test:runtimes runs them all on every runtime; here they only
  // show that the installed signing package works
  const vectorsDir = join(scratch, "vectors")
  cpSync(join(fullVectorsDir, "keys"), join(vectorsDir, "keys"), { recursive: true })
  for (const f of ["control.json", "oauth.json", "callback.json"]) {
    const v = JSON.parse(readFileSync(join(fullVectorsDir, f), "utf8"))
    for (const k of ["cases", "base_string_examples"]) if (Array.isArray(v[k])) v[k] = v[k].slice(0, 3)
    writeFileSync(join(vectorsDir, f), JSON.stringify(v))
  }

  // 1. Verdaccio on loopback, nothing proxied
  const port = await freePort()
  const registry = `http://127.0.0.1:${port}/`
  const vdir = join(scratch, "verdaccio")
  mkdirSync(vdir)
  writeFileSync(
    join(vdir, "config.yaml"),
    `storage: ${join(vdir, "storage")}
auth:
  htpasswd:
    file: ${join(vdir, "htpasswd")}
    max_users: 10
uplinks: {}
packages:
  '**':
    access: $all
    publish: $authenticated
    unpublish: $authenticated
server:
  keepAliveTimeout: 60
logs: { type: stdout, format: pretty, level: warn }
publish:
  allow_offline: true
`
  )
  const verdaccioBin = join(root, "node_modules", "verdaccio", "bin", "verdaccio")
  const v = await startUntil(process.execPath, [verdaccioBin, "--config", join(vdir, "config.yaml"), "--listen", `127.0.0.1:${port}`], vdir, /http address|warn --- .*127\.0\.0\.1/)
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${registry}-/ping`)).ok) break
    } catch {
      if (i > 100) throw new Error("verdaccio does not answer /-/ping")
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  void v
  // a user, as `npm adduser` makes one; its token goes in the publisher's npmrc
  const user = await fetch(`${registry}-/user/org.couchdb.user:rehearsal`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: "rehearsal", password: "rehearsal-pass", email: "rehearsal@example.com", type: "user" })
  })
  const { token } = await user.json()
  if (!token) throw new Error(`verdaccio gave no token (${user.status})`)
  const hostPath = registry.replace(/^https?:/, "")
  console.log(`verdaccio on ${registry} (storage ${vdir}/storage, no uplinks) (${elapsed()})`)

  // 2. a temp repository holding this working tree and the built dist/
  const repo = join(scratch, "repo")
  mkdirSync(repo)
  const files = run("git", ["ls-files", "-co", "--exclude-standard", "-z"], root).split("\0").filter((f) => f && existsSync(join(root, f)))
  writeFileSync(join(scratch, "files"), files.join("\0"))
  execFileSync("sh", ["-c", `tar -C "${root}" --null -T "${join(scratch, "files")}" -cf - | tar -C "${repo}" -xf -`])
  for (const p of PACKAGES) cpSync(join(root, "packages", p, "dist"), join(repo, "packages", p, "dist"), { recursive: true })
  // the tools (changeset, turbo) from this workspace's node_modules, read only; and each package's
  // @paykit siblings linked as pnpm links them (pnpm publish reads their versions there)
  symlinkSync(join(root, "node_modules"), join(repo, "node_modules"))
  for (const p of PACKAGES) {
    const m = JSON.parse(readFileSync(join(repo, "packages", p, "package.json"), "utf8"))
    for (const d of Object.keys({ ...m.dependencies, ...m.devDependencies, ...m.peerDependencies }).filter((d) => d.startsWith("@paykit/"))) {
      mkdirSync(join(repo, "packages", p, "node_modules", "@paykit"), { recursive: true })
      symlinkSync(join("..", "..", "..", d.slice("@paykit/".length)), join(repo, "packages", p, "node_modules", d))
    }
  }
  const gitEnv = { ...process.env, GIT_AUTHOR_NAME: "Release Rehearsal", GIT_AUTHOR_EMAIL: "rehearsal@example.com", GIT_COMMITTER_NAME: "Release Rehearsal", GIT_COMMITTER_EMAIL: "rehearsal@example.com" }
  const git = (...args) => run("git", args, repo, { env: gitEnv }).trim()
  git("init", "-q", "-b", "main")
  writeFileSync(join(repo, ".git", "info", "exclude"), "node_modules\n")
  git("add", "-A")
  git("commit", "-q", "-m", "base")
  const base = git("rev-parse", "HEAD")
  console.log(`temp repository ${repo}: ${files.length} files + dist/ of the five packages (${elapsed()})`)

  // 3a. the scope's registry set to the public registry: refused, nothing published
  const cleanEnv = Object.fromEntries(Object.entries(gitEnv).filter(([k]) => !/^npm_config_|^npm_lifecycle|^pnpm_config_/i.test(k)))
  const release = (env) => spawnCollect(process.execPath, [join(repo, "scripts", "release", "release.mjs"), "--skip-build", "--skip-checks"], repo, env, 300_000)
  const refused = await release({ ...cleanEnv, "npm_config_@paykit:registry": "https://registry.npmjs.org/", npm_config_userconfig: join(scratch, "none.npmrc") })
  const refusedText = `${refused.out}${refused.err}`
  record(
    "pnpm release with npm_config_@paykit:registry=https://registry.npmjs.org/ refuses",
    refused.code === 1 && /refused: .*public registry/.test(refusedText) && git("rev-parse", "HEAD") === base && git("status", "--porcelain") === "",
    refusedText.trim().split("\n").at(-1)
  )

  // 3b. the usual way: an npmrc naming the scope's registry and its token
  const publisherRc = join(scratch, "publisher.npmrc")
  writeFileSync(publisherRc, `@paykit:registry=${registry}\n${hostPath}:_authToken=${token}\n`)
  const rel = await release({ ...cleanEnv, npm_config_userconfig: publisherRc })
  const relText = `${rel.out}${rel.err}`
  if (verbose || rel.code !== 0) console.log(relText.replace(/^/gm, "  | "))
  if (rel.code !== 0) throw new Error(`pnpm release failed (exit ${rel.code})`)
  const head = git("rev-parse", "HEAD")
  const version = JSON.parse(readFileSync(join(repo, "packages", "client", "package.json"), "utf8")).version
  const bumped = git("diff", "--name-only", `${base}..${head}`).split("\n")
  const tagProblems = []
  for (const p of PACKAGES) {
    const tag = `@paykit/${p}@${version}`
    let at = ""
    try {
      at = git("rev-list", "-n", "1", tag)
    } catch {
      at = "(missing)"
    }
    if (at !== head) tagProblems.push(`${tag} on ${at.slice(0, 12)}`)
  }
  record(
    `release commit ${head.slice(0, 12)} holds the bump to ${version}; five tags on it`,
    head !== base && PACKAGES.every((p) => bumped.includes(`packages/${p}/package.json`)) && tagProblems.length === 0 && git("status", "--porcelain") === "",
    tagProblems.length > 0 ? tagProblems.join(", ") : `${git("log", "-1", "--format=%s")}; changed ${bumped.length} files`
  )
  // what the registry holds
  const manifestProblems = []
  for (const p of PACKAGES) {
    const res = await fetch(`${registry}@paykit%2f${p}`)
    const doc = res.ok ? await res.json() : undefined
    const m = doc?.versions?.[version]
    if (m === undefined) {
      manifestProblems.push(`@paykit/${p}@${version} not on the registry`)
      continue
    }
    published++
    for (const [d, r] of Object.entries(m.dependencies ?? {})) if (d.startsWith("@paykit/") && r !== version) manifestProblems.push(`@paykit/${p} requires ${d}@${r}`)
    if (m.dependencies?.effect) manifestProblems.push(`@paykit/${p} depends on effect ${m.dependencies.effect}`)
    if (p !== "signing" && m.peerDependencies?.effect !== "^3.22.0") manifestProblems.push(`@paykit/${p} effect peer ${m.peerDependencies?.effect}`)
  }
  record(`published ${published} to verdaccio at ${version}: siblings exact, effect a peer`, published === 5 && manifestProblems.length === 0, manifestProblems.join("; "))
  console.log(`released (${elapsed()})`)
  consumersFrom = results.length

  // 4. consumers: the scope from verdaccio, everything else from the usual registry
  const consumerRc = join(scratch, "consumer.npmrc")
  const userRc = process.env.npm_config_userconfig ?? join(process.env.HOME ?? "/root", ".npmrc")
  writeFileSync(consumerRc, `${existsSync(userRc) ? `${readFileSync(userRc, "utf8")}\n` : ""}@paykit:registry=${registry}\n`)
  const consumerEnv = { ...cleanEnv, npm_config_userconfig: consumerRc, npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false" }
  const project = (name, deps) => {
    const dir = join(scratch, name)
    mkdirSync(dir)
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module", dependencies: deps }, null, 2))
    return dir
  }
  const at = (names) => Object.fromEntries(names.map((n) => [`@paykit/${n}`, version]))
  const npmDir = project("consumer-npm", { ...at(["client", "testkit", "cli", "signing"]), effect: "3.22.4" })
  const pnpmDir = project("consumer-pnpm", { ...at(["client", "testkit", "cli", "signing"]), effect: "3.22.0" })
  const oldDir = project("consumer-effect-3.21", { ...at(["client"]), effect: "3.21.5" })
  const oldNpmDir = project("consumer-effect-3.21-npm", { ...at(["client"]), effect: "3.21.5" })
  const pnpmArgs = (extra) => [...pnpmCmd.slice(1), "install", "--ignore-workspace", "--config.auto-install-peers=true", ...extra]
  // the bins from an empty folder, as the README says (`npx -p @paykit/testkit paykit-sim`), beside
  // the installs; npx gets a cache of its own so an earlier rehearsal's same-named version cannot answer
  const empty = join(scratch, "empty")
  mkdirSync(empty)
  // the simulator approves in 100 ms instead of 2 s (the default merchant stays)
  writeFileSync(join(scratch, "sim.json"), JSON.stringify({ processingDelayMs: 100 }))
  const npxEnv = { ...consumerEnv, npm_config_cache: join(scratch, "npm-cache-npx"), npm_config_prefer_online: "true" }
  const simStarted = startUntil("npx", ["-y", "-p", `@paykit/testkit@${version}`, "paykit-sim", "--port", "0", "--quiet", "--config", join(scratch, "sim.json")], empty, /listening on (http:\/\/\S+)/, npxEnv, 180_000).then(
    (sim) => ({ url: sim.match[1] }),
    (e) => ({ error: String(e.message) })
  )
  const [npmInstall, pnpmInstall, oldInstall, oldNpmInstall, cli, sim] = await Promise.all([
    spawnCollect("npm", ["install", "--no-audit", "--no-fund"], npmDir, consumerEnv, 300_000),
    spawnCollect(pnpmCmd[0], pnpmArgs([]), pnpmDir, consumerEnv, 300_000),
    spawnCollect(pnpmCmd[0], pnpmArgs([]), oldDir, consumerEnv, 300_000),
    spawnCollect("npm", ["install", "--package-lock-only", "--no-audit", "--no-fund"], oldNpmDir, consumerEnv, 300_000),
    spawnCollect("npx", ["-y", "-p", `@paykit/cli@${version}`, "paykit", "sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"], empty, npxEnv, 180_000),
    simStarted
  ])
  record(`npm install @paykit/*@${version} effect@3.22.4`, npmInstall.code === 0, npmInstall.code === 0 ? "" : `${npmInstall.out}${npmInstall.err}`)
  record(`pnpm install @paykit/*@${version} effect@3.22.0 (the floor of the peer range)`, pnpmInstall.code === 0 && !/unmet peer effect/.test(pnpmInstall.out + pnpmInstall.err), pnpmInstall.code === 0 ? "no peer warning" : `${pnpmInstall.out}${pnpmInstall.err}`)
  const oldText = `${oldInstall.out}${oldInstall.err}`
  const warned = /unmet peer effect@"?\^3\.22\.0"?: found 3\.21\.5/.exec(oldText)
  record("effect 3.21.5 app: pnpm warns", warned !== null, warned ? warned[0] : oldText)
  // and at run time, @paykit/contracts' check says the same in one line
  const oldRun = await spawnCollect(process.execPath, ["--input-type=module", "-e", 'await import("@paykit/client")'], oldDir, consumerEnv)
  const runWarning = /PAYKIT_EFFECT_VERSION: .*effect 3\.21\.5[^\n]*/.exec(oldRun.err)
  record("effect 3.21.5 app: importing @paykit/client warns", runWarning !== null, runWarning ? runWarning[0] : `exit ${oldRun.code}: ${oldRun.err || oldRun.out}`)
  const oldNpmText = `${oldNpmInstall.out}${oldNpmInstall.err}`
  record("effect 3.21.5 app: npm refuses (ERESOLVE)", oldNpmInstall.code !== 0 && /ERESOLVE/.test(oldNpmText) && /peer effect@"\^3\.22\.0"/.test(oldNpmText), oldNpmText.split("\n").find((l) => /peer effect@/.test(l))?.replace(/^npm (error|ERR!) /, "") ?? oldNpmText)
  record("npx -p @paykit/testkit paykit-sim (empty folder)", sim.url !== undefined, sim.url ? `listening on ${sim.url}` : sim.error)
  const simUrl = sim.url
  record("npx -p @paykit/cli paykit sign SALE … (empty folder)", cli.code === 0 && cli.out.trim() === "c6bdd88a78834ef4b863b088827a459f039e8257", cli.code === 0 ? cli.out.trim() : `${cli.out}${cli.err}`)
  console.log(`consumers installed, bins run from an empty folder (${elapsed()})`)

  // the runs, a few at a time
  const jobs = []
  for (const [pm, dir, install] of [["npm", npmDir, npmInstall], ["pnpm", pnpmDir, pnpmInstall]]) {
    if (install.code !== 0 || simUrl === undefined) {
      record(`${pm} consumer runs`, false, simUrl === undefined ? "no simulator" : "not installed")
      continue
    }
    for (const f of ["entry.mjs", "scenario.mjs", "vectors.mjs"]) copyFileSync(join(runtimesDir, f), join(dir, f))
    copyFileSync(join(here, "consumer-cjs.cjs"), join(dir, "consumer-cjs.cjs"))
    copyFileSync(join(here, "consumer-effect.mjs"), join(dir, "consumer-effect.mjs"))
    for (const r of runtimes) {
      jobs.push({
        name: `${pm} ${r.id}: ESM Promise facade (vectors, sale, status, simulator + callback)`,
        go: async () => {
          const res = await spawnCollect(r.command, [...r.args, "entry.mjs", vectorsDir, simUrl, r.id], dir, consumerEnv)
          const line = res.out.split("\n").find((l) => l.startsWith("PAYKIT_RUNTIME_REPORT "))
          const report = line ? JSON.parse(line.slice("PAYKIT_RUNTIME_REPORT ".length)) : undefined
          return report?.ok ? [true, `${report.version}`] : [false, report?.firstError ?? `exit ${res.code}: ${(res.err || res.out).trim()}`]
        }
      })
    }
    const node = async (args) => {
      const res = await spawnCollect(process.execPath, args, dir, consumerEnv)
      const last = res.out.trim().split("\n").at(-1) ?? ""
      return res.code === 0 && last.startsWith("ok") ? [true, last.slice(3)] : [false, `exit ${res.code}: ${(res.err || res.out).trim()}`]
    }
    jobs.push({ name: `${pm} node20: CJS Promise facade (sale, status, callback)`, go: () => node(["consumer-cjs.cjs", simUrl]) })
    jobs.push({ name: `${pm} node20: Effect API (sale, status, callback)`, go: () => node(["consumer-effect.mjs", simUrl]) })
    jobs.push({
      name: `${pm} node20: installed paykit bin (--help)`,
      go: async () => {
        const res = await spawnCollect(join(dir, "node_modules", ".bin", "paykit"), ["--help"], dir, consumerEnv)
        return res.code === 0 && /\bsign\b/.test(res.out) ? [true, res.out.trim().split("\n")[0]] : [false, `exit ${res.code}: ${res.err || res.out}`]
      }
    })
  }
  const queue = [...jobs]
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
        const started = Date.now()
        let ok = false
        let detail
        try {
          ;[ok, detail] = await job.go()
        } catch (e) {
          detail = String(e?.stack ?? e)
        }
        record(job.name, ok, `${detail} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
      }
    })
  )
} catch (e) {
  record("rehearsal", false, `aborted: ${e?.stack ?? errText(e)}`)
} finally {
  for (const c of children) killGroup(c, "SIGTERM")
  await new Promise((r) => setTimeout(r, 300))
  for (const c of children) if (c.exitCode === null && c.signalCode === null) killGroup(c, "SIGKILL")
  if (process.env.PAYKIT_KEEP_SCRATCH) console.log(`scratch kept: ${scratch}`)
  else rmSync(scratch, { recursive: true, force: true })
}
const failed = results.filter((r) => !r.ok).length
const consumers = results.slice(consumersFrom).filter((r) => r.ok).length
console.log(`total ${elapsed()}`)
console.log(`release: published ${published}, consumers ${consumers} ok${failed > 0 ? `, ${failed} FAIL` : ""}`)
process.exit(failed === 0 && published === 5 ? 0 : 1)
