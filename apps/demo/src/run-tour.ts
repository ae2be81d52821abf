/**
 * Runs every flow, prints progress and the summary table, and says how many ran as expected and
 * which were skipped, each with its reason.
 */
import { embedded, gateway, MERCHANT_ORIGIN, type DemoEnv } from "./environment"
import { summaryTable, step, verdict, type FlowResult } from "./report"
import { flows, type Flow } from "./tour"

// A flow's final status that starts with this did not run; the rest is the reason.
const SKIPPED = "skipped: "

const callbacksFlow: Flow = {
  name: "callbacks received and verified",
  expected: "all verified, forged refused",
  run: async (env) => {
    if (env.serverCallbackUrl === undefined) {
      return { orderid: "-", finalStatus: `${SKIPPED}set PAYKIT_CALLBACK_URL to a public URL of yours` }
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

/** Runs the tour; resolves to true when every flow that ran ended as expected (skips are listed apart). */
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
      if (flow.simulatorOnly !== undefined && env.simulator === undefined) {
        step(`skipped: ${flow.simulatorOnly}`)
        results.push({ flow: flow.name, orderid: "-", finalStatus: "skipped", expected: flow.expected, ms: 0, ok: true, skipped: flow.simulatorOnly })
        continue
      }
      try {
        const { orderid, finalStatus } = await flow.run(env)
        const reason = finalStatus.startsWith(SKIPPED) ? finalStatus.slice(SKIPPED.length) : undefined
        const ok = finalStatus === flow.expected || reason !== undefined
        results.push({ flow: flow.name, orderid, finalStatus: reason === undefined ? finalStatus : "skipped", expected: flow.expected, ms: Date.now() - t0, ok, ...(reason === undefined ? {} : { skipped: reason }) })
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
  console.log(verdict(results, Date.now() - started))
  return failed.length === 0
}
