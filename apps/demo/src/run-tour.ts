/**
 * Runs every flow, prints progress and the summary table, and says whether all ended as expected.
 */
import { embedded, gateway, MERCHANT_ORIGIN, type DemoEnv } from "./environment"
import { summaryTable, step, type FlowResult } from "./report"
import { flows, type Flow } from "./tour"

const callbacksFlow: Flow = {
  name: "callbacks received and verified",
  expected: "all verified, forged refused",
  run: async (env) => {
    if (env.serverCallbackUrl === undefined) {
      return { orderid: "-", finalStatus: "skipped: set PAYKIT_CALLBACK_URL to a public URL of yours" }
    }
    // Let the last deliveries land (the simulator delivers on its own clock).
    if (env.simulator) await env.simulator.clock.advance(1000)
    const verified = env.callbacks.length
    step(`${verified} callbacks arrived and verified, ${env.finalRedirects.length} signed final redirects verified`)
    const forged = new URL(`${MERCHANT_ORIGIN}/callback`)
    forged.search = new URLSearchParams({ status: "approved", orderid: "1", merchant_order: "x", client_orderid: "x", type: "sale", amount: "1.00", currency: "EUR", control: "0".repeat(40) }).toString()
    const answer = await env.browserFetch(new Request(forged))
    step(`a forged callback was answered ${answer.status}`)
    const ok = verified > 0 && answer.status === 403
    return { orderid: "-", finalStatus: ok ? "all verified, forged refused" : `${verified} verified, forged got ${answer.status}` }
  }
}

/** Runs the tour; resolves to true when every flow ended as expected. */
export const runTour = async (): Promise<boolean> => {
  const useGateway = process.env.PAYKIT_BASE_URL !== undefined
  const env: DemoEnv = useGateway ? gateway() : embedded()
  console.log(`PayKit demo — every flow against the ${env.target}\n`)
  if (useGateway) console.log("Flows that need the simulator (its clock, hosted pages without a person) are skipped.\n")
  const results: Array<FlowResult> = []
  let accounted: string | undefined
  const started = Date.now()
  try {
    for (const flow of [...flows, callbacksFlow]) {
      console.log(`▸ ${flow.name}`)
      const t0 = Date.now()
      if (flow.simulatorOnly && env.simulator === undefined) {
        step("skipped: needs the embedded simulator")
        results.push({ flow: flow.name, orderid: "-", finalStatus: "skipped: needs the embedded simulator", expected: flow.expected, ms: 0, ok: true })
        continue
      }
      try {
        const { orderid, finalStatus } = await flow.run(env)
        const ok = finalStatus === flow.expected || finalStatus.startsWith("skipped")
        results.push({ flow: flow.name, orderid, finalStatus, expected: flow.expected, ms: Date.now() - t0, ok })
      } catch (error) {
        const tag = (error as { _tag?: string })._tag
        const message = error instanceof Error ? error.message : String(error)
        step(`failed: ${tag ?? "Error"}: ${message}`)
        results.push({ flow: flow.name, orderid: "-", finalStatus: `error: ${tag ?? message}`, expected: flow.expected, ms: Date.now() - t0, ok: false })
      }
    }
    // Every order the simulator made must appear in the table: no flow may leave one out silently.
    if (env.simulator !== undefined) {
      const shown = new Set(results.flatMap((r) => r.orderid.split(",")))
      const made = env.simulator.orders().map((o) => o.orderid)
      const missing = made.filter((id) => !shown.has(id))
      accounted = missing.length === 0
        ? `Every order the simulator made (${made.length}) is in the table.`
        : `${missing.length} of the simulator's ${made.length} orders are in no row of the table: ${missing.join(", ")}`
      if (missing.length > 0) results.push({ flow: "orders accounted for", orderid: missing.join(","), finalStatus: "not in the table", expected: "every order in the table", ms: 0, ok: false })
    }
  } finally {
    await env.close()
  }
  const failed = results.filter((r) => !r.ok)
  console.log(`\n${summaryTable(results)}\n`)
  if (accounted !== undefined) console.log(accounted)
  console.log(
    failed.length === 0
      ? `All ${results.length} flows ended as expected in ${Date.now() - started} ms.`
      : `${failed.length} of ${results.length} flows did not end as expected: ${failed.map((f) => f.flow).join(", ")}`
  )
  return failed.length === 0
}
