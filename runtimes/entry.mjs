/**
 * Entry of the scenario on Node, Bun and Deno: `<runtime> entry.mjs VECTORS_DIR SIM_URL LABEL`,
 * run from a scratch project where the packed @paykit tarballs are installed. Prints one line
 * `PAYKIT_RUNTIME_REPORT {json}`; exits 0 when every step passed.
 */
import { readFileSync, readdirSync } from "node:fs"
import { join } from "node:path"
import process from "node:process"
import { runScenario } from "./scenario.mjs"

const [vectorsDir, simUrl, label] = process.argv.slice(2)
const read = (name) => JSON.parse(readFileSync(join(vectorsDir, name), "utf8"))
const vectors = { control: read("control.json"), oauth: read("oauth.json"), callback: read("callback.json") }
const keys = Object.fromEntries(readdirSync(join(vectorsDir, "keys")).map((f) => [f, readFileSync(join(vectorsDir, "keys", f), "utf8")]))

// the runtime's own HTTP server for a fetch handler, where it has one
let serve
if (typeof globalThis.Bun?.serve === "function") {
  serve = async (fetch) => {
    const server = globalThis.Bun.serve({ port: 0, hostname: "127.0.0.1", fetch })
    return { url: `http://127.0.0.1:${server.port}`, close: () => server.stop(true) }
  }
  serve.label = "Bun.serve"
} else if (typeof globalThis.Deno?.serve === "function") {
  serve = async (fetch) => {
    const server = globalThis.Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, fetch)
    return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() }
  }
  serve.label = "Deno.serve"
}

const report = await runScenario({ vectors, keys, simUrl, serve, listen: serve === undefined, runtime: label })
report.version = globalThis.Bun?.version ? `bun ${globalThis.Bun.version}` : globalThis.Deno?.version ? `deno ${globalThis.Deno.version.deno}` : `node ${process.version}`
console.log(`PAYKIT_RUNTIME_REPORT ${JSON.stringify(report)}`)
process.exit(report.ok ? 0 : 1)
