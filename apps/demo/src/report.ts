/**
 * Progress lines while the tour runs, and the summary table at the end.
 */

/** The outcome of one flow of the tour. */
export interface FlowResult {
  readonly flow: string
  readonly orderid: string
  readonly finalStatus: string
  readonly expected: string
  readonly ms: number
  readonly ok: boolean
  /** Why the flow did not run (it then counts as neither ok nor failed). */
  readonly skipped?: string
  readonly note?: string
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + " ".repeat(n - s.length))

/** Prints one step of a flow, indented under it. */
export const step = (text: string): void => {
  console.log(`    · ${text}`)
}

/** Renders the summary as a fixed-width table. */
export const summaryTable = (rows: ReadonlyArray<FlowResult>): string => {
  const head = ["flow", "orderid", "final status", "expected", "time", "result"]
  const body = rows.map((r) => [r.flow, r.orderid, r.finalStatus, r.expected, `${r.ms} ms`, r.skipped !== undefined ? "skipped" : r.ok ? "ok" : "FAILED"])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => pad(c, widths[i]!)).join("  ").trimEnd()
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}

/**
 * The tour's last line: how many flows ran as expected, which failed, and each skipped flow with
 * its reason. A skipped flow is never counted as one that ended as expected.
 */
export const verdict = (rows: ReadonlyArray<FlowResult>, ms: number): string => {
  const skipped = rows.filter((r) => r.skipped !== undefined)
  const ran = rows.filter((r) => r.skipped === undefined)
  const failed = ran.filter((r) => !r.ok)
  const skips = skipped.length === 0 ? "" : `, ${skipped.length} skipped: ${skipped.map((r) => `${r.flow} (${r.skipped})`).join("; ")}`
  if (failed.length > 0) {
    return `${failed.length} of ${ran.length} flows that ran did not end as expected: ${failed.map((f) => f.flow).join(", ")}${skips}.`
  }
  if (skipped.length === 0) return `All ${ran.length} flows ended as expected in ${ms} ms.`
  return `${ran.length} ran as expected${skips}.`
}
