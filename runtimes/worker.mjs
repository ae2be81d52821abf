/**
 * Entry of the scenario on workerd (a Cloudflare Worker module, bundled by esbuild the way wrangler
 * bundles one, with `nodejs_compat`). `GET /run?sim=URL` runs the scenario and answers the report
 * as JSON. The vectors are bundled in (`vectors-data.json`, written by run.mjs): a worker has no
 * file system to read them from.
 *
 * Signing prefers the package's async (WebCrypto) variants when it exports them: `node:crypto`
 * under `nodejs_compat` is partial, and WebCrypto is what every edge runtime has.
 */
import data from "./vectors-data.json"
import { runScenario } from "./scenario.mjs"

export default {
  async fetch(request) {
    const url = new URL(request.url)
    if (url.pathname !== "/run") return new Response("not found", { status: 404 })
    const report = await runScenario({
      vectors: data.vectors,
      keys: data.keys,
      simUrl: url.searchParams.get("sim"),
      preferAsync: true,
      runtime: "workerd"
    })
    report.version = `workerd (compatibility date ${data.compatibilityDate})`
    return Response.json(report)
  }
}
