/**
 * A second Worker on workerd, WITHOUT `nodejs_compat` and on a compatibility date (run.mjs) where
 * `node:crypto` does not exist: only @paykit/signing and the vectors, the way an edge function
 * that verifies callbacks or signs requests would use it. So this passes only when the package
 * loads without `node:crypto` and signs through
 * WebCrypto (its async variants, preferred when exported). `GET /run` answers the vector report.
 */
import data from "./vectors-data.json"
import { describe, runVectors } from "./vectors.mjs"

export default {
  async fetch(request) {
    if (new URL(request.url).pathname !== "/run") return new Response("not found", { status: 404 })
    const started = Date.now()
    try {
      const result = await runVectors(data.vectors, data.keys, { preferAsync: true })
      const ok = result.failed === 0
      return Response.json({
        ok,
        ms: Date.now() - started,
        passed: result.passed,
        used: result.used,
        ...(ok ? {} : { error: `${result.failed} of ${result.passed + result.failed} vectors failed (using ${result.used.join(", ")}); first: ${result.failures.join("; ")}` })
      })
    } catch (e) {
      return Response.json({ ok: false, error: describe(e) })
    }
  }
}
