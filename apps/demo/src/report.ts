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
  const body = rows.map((r) => [r.flow, r.orderid, r.finalStatus, r.expected, `${r.ms} ms`, r.ok ? "ok" : "FAILED"])
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => pad(c, widths[i]!)).join("  ").trimEnd()
  return [line(head), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n")
}
