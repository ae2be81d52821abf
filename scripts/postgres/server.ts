/**
 * A throwaway PostgreSQL server for tests and the fleet run: Debian's `postgresql` package
 * (`apt-get install -y postgresql`), `initdb` and `pg_ctl` run as the `postgres` user when we are
 * root (both refuse root), in a fresh temporary directory, on a free port of 127.0.0.1, with a random
 * password (SCRAM) so the connection URL is a real secret. `stop()` stops the server and removes the
 * directory; a process `exit` hook does the same if the caller never got to call it.
 *
 * When the server cannot start, `startPostgres` rejects with the reason and the end of the server's
 * log: callers must let that fail their run, never skip.
 */
import { execFile, execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { chmodSync, chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** A running server. */
export interface PostgresServer {
  /** `postgres://postgres:<password>@127.0.0.1:<port>/postgres` (holds the password: keep it out of logs). */
  readonly url: string
  /** Its TCP port. */
  readonly port: number
  /** The temporary directory (data, socket, log); removed by `stop()`. */
  readonly dir: string
  /** The data directory inside `dir`. */
  readonly dataDir: string
  /** The server's major version (`15`). */
  readonly version: string
  /**
   * Stops the server and removes `dir`; safe to call twice. With `keepDataIn`, the stopped server's
   * data directory is moved there first (a path that must not exist yet), owned as before, so the
   * database can be started again and inspected (`pg_ctl -D <keepDataIn> start` as that owner).
   */
  readonly stop: (options?: { readonly keepDataIn?: string | undefined }) => Promise<void>
}

/** Options of {@link startPostgres}. */
export interface StartOptions {
  /** Directory of `initdb`/`pg_ctl` (default: `PAYKIT_PG_BIN`, else the newest `/usr/lib/postgresql/<n>/bin`). */
  readonly binDir?: string | undefined
  /** Seconds `pg_ctl` waits for the server to accept connections (default 60). */
  readonly startTimeoutSeconds?: number | undefined
  /** The server's `max_connections` (default 50); a fleet of many worker pools needs more. */
  readonly maxConnections?: number | undefined
}

const INSTALL_HINT = "install Debian's postgresql package (apt-get update && apt-get install -y postgresql) or set PAYKIT_PG_BIN"

/** Finds the server binaries, or throws naming what is missing and how to install it. */
export function findPostgresBin(explicit?: string): string {
  const given = explicit ?? process.env["PAYKIT_PG_BIN"]
  if (given !== undefined && given !== "") {
    if (!existsSync(join(given, "pg_ctl"))) throw new Error(`PostgreSQL: no pg_ctl in ${given}: ${INSTALL_HINT}`)
    return given
  }
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root)
    ? readdirSync(root).filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, "bin", "pg_ctl"))).sort((a, b) => Number(b) - Number(a))
    : []
  if (versions[0] === undefined) throw new Error(`PostgreSQL: no server binaries under ${root}/*/bin: ${INSTALL_HINT}`)
  return join(root, versions[0], "bin")
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => (port > 0 ? resolve(port) : reject(new Error("PostgreSQL: no free port"))))
    })
  })
}

interface Runner {
  readonly command: (bin: string, args: ReadonlyArray<string>) => [string, Array<string>]
  readonly uid: number | undefined
  readonly gid: number | undefined
}

// initdb and pg_ctl refuse to run as root: as root, run them as `postgres` through runuser.
function runner(): Runner {
  if (process.getuid?.() !== 0) return { command: (bin, args) => [bin, [...args]], uid: undefined, gid: undefined }
  let ids: Array<number>
  try {
    ids = ["-u", "-g"].map((flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim()))
  } catch {
    throw new Error(`PostgreSQL: running as root and there is no postgres user to run the server as: ${INSTALL_HINT}`)
  }
  return { command: (bin, args) => ["runuser", ["-u", "postgres", "--", bin, ...args]], uid: ids[0], gid: ids[1] }
}

function run(r: Runner, bin: string, args: ReadonlyArray<string>, timeoutMs: number): Promise<void> {
  const [file, argv] = r.command(bin, args)
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) return resolve()
      const output = `${stderr}\n${stdout}`.trim().split("\n").slice(-12).join("\n")
      reject(new Error(`${bin.split("/").pop()} failed (${error.message.split("\n")[0]}):\n${output}`))
    })
  })
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").trim().split("\n").slice(-15).join("\n")
  } catch {
    return "(no server log)"
  }
}

/** Moves a stopped server's data directory to `target` (copied, then owned as the server's, across file systems). */
function keepData(dataDir: string, target: string, r: Runner): void {
  if (existsSync(target)) throw new Error(`PostgreSQL: cannot keep the data directory in ${target}: it exists`)
  try {
    renameSync(dataDir, target)
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EXDEV") throw error
    cpSync(dataDir, target, { recursive: true })
    if (r.uid !== undefined && r.gid !== undefined) execFileSync("chown", ["-R", `${r.uid}:${r.gid}`, target])
  }
}

/** Starts a fresh server; rejects with the reason when it cannot. */
export async function startPostgres(options: StartOptions = {}): Promise<PostgresServer> {
  const maxConnections = options.maxConnections ?? 50
  if (!Number.isSafeInteger(maxConnections) || maxConnections < 5 || maxConnections > 10_000) throw new RangeError("startPostgres: maxConnections must be an integer from 5 to 10000")
  const binDir = findPostgresBin(options.binDir)
  const version = binDir.split("/").at(-2) ?? "?"
  const r = runner()
  const dir = mkdtempSync(join(tmpdir(), "paykit-pg-"))
  const dataDir = join(dir, "data")
  const log = join(dir, "server.log")
  const pwfile = join(dir, "pwfile")
  const password = randomBytes(18).toString("base64url")
  const pgCtl = join(binDir, "pg_ctl")
  let started = false
  let stopped = false

  const stopSync = (keepDataIn?: string) => {
    if (stopped) return
    stopped = true
    if (started) {
      try {
        const [file, argv] = r.command(pgCtl, ["-D", dataDir, "-m", "fast", "-w", "-t", "30", "stop"])
        execFileSync(file, argv, { stdio: "ignore", timeout: 35_000 })
      } catch {
        // Already stopped (or never came up): removing the directory below is all that is left.
      }
    }
    try {
      if (keepDataIn !== undefined && existsSync(dataDir)) keepData(dataDir, keepDataIn, r)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  const onExit = () => stopSync()
  process.once("exit", onExit)

  try {
    if (r.uid !== undefined && r.gid !== undefined) chownSync(dir, r.uid, r.gid)
    chmodSync(dir, 0o700)
    writeFileSync(pwfile, password + "\n", { mode: 0o600 })
    if (r.uid !== undefined && r.gid !== undefined) chownSync(pwfile, r.uid, r.gid)
    await run(r, join(binDir, "initdb"), [
      "-D", dataDir, "-U", "postgres", `--pwfile=${pwfile}`, "--auth-host=scram-sha-256", "--auth-local=trust",
      "--encoding=UTF8", "--locale=C", "--no-sync"
    ], 120_000)
    rmSync(pwfile, { force: true })
    const port = await freePort()
    // fsync off: a test server's data is thrown away, and syncing costs the shared machine seconds.
    const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=${maxConnections}`
    const timeout = options.startTimeoutSeconds ?? 60
    started = true
    await run(r, pgCtl, ["-D", dataDir, "-l", log, "-o", serverOptions, "-w", "-t", String(timeout), "start"], (timeout + 10) * 1000)
    return {
      url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
      port,
      dir,
      dataDir,
      version,
      stop: async (options) => {
        process.removeListener("exit", onExit)
        stopSync(options?.keepDataIn)
      }
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    const logTail = started ? `\nserver log:\n${tail(log)}` : ""
    process.removeListener("exit", onExit)
    stopSync()
    throw new Error(`PostgreSQL ${version} could not start: ${reason}${logTail}`)
  }
}
