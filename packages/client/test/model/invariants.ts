/**
 * The model's invariants, read from the book (what was sent, what landed, what every answer said)
 * and the calls still running:
 *
 * 1. each idempotency key moves money at most once;
 * 2. each order's money is what the model's requests moved;
 * 3. every call ends applied / not-applied / conflict / unknown, within its deadline, and never a
 *    wrong one.
 *
 * @packageDocumentation
 */
import { cents, type Book } from "./book"

/** How long past its deadline a call may take to answer (a poll, a store write in memory). */
export const DEADLINE_SLACK_MS = 100

/**
 * The labels a problem starts with: `[invariant kind]`. Invariant 1, each key moves money at most
 * once (`double-move`); 2, each order's money is what the model's requests moved
 * (`unexplained-money`, `figures`); 3, every call ends applied / not-applied / conflict / unknown,
 * never a wrong one (`no-verdict`, `never-ends`, `applied-without-money`, `not-applied-but-moved`,
 * `nothing-sent-after-send`).
 */
export const problemKind = (problem: string): string => /^\[([^\]]+)\]/.exec(problem)?.[1] ?? problem

/** A call as the invariants read it. */
export interface CallRecord {
  readonly n: number
  readonly what: string
  /** The instance that runs it. */
  readonly instance: string
  readonly startedAt: number
  readonly deadlineMs: number
  readonly ended: boolean
}

/**
 * The problems of a sequence at virtual time `now`: those the book noted as they happened (an
 * answer checked at its moment) and those found by looking at everything again.
 */
export function checkInvariants(book: Book, calls: ReadonlyArray<CallRecord>, now: number): Array<string> {
    const problems = [...book.problems]
    for (const key of book.keys()) {
      // 1. Each idempotency key moves money at most once.
      const money = book.moneyOf(key)
      if (money.length > 1) {
        const answers = book.verdicts.filter((v) => v.key === key).map((v) => `${v.tag}${v.source.startsWith("recover") ? " (recover)" : ""}`)
        problems.push(`[1 double-move] key ${key} moved money ${money.length} times (${money.map((m) => `${m.send.operation} by ${m.send.instance} send #${m.send.seq} on ${m.orderid}, ${m.status}`).join("; ")}); its answers: ${answers.join(", ") || "none"}`)
      }
      // 3. An answer "not applied" is wrong when a send of its key made before it moved money (now or later).
      for (const v of book.verdicts) {
        if (v.key !== key || v.kind !== "notApplied") continue
        const earlier = money.filter((m) => m.send.seq < v.seq)
        if (earlier.length > 0) {
          problems.push(`[3 not-applied-but-moved${v.source.startsWith("recover") ? " (recover)" : ""}] ${v.source} answered not-applied (${v.tag}) at #${v.seq} for key ${key}, but its send #${earlier[0]!.send.seq} by ${earlier[0]!.send.instance} moved money on ${earlier[0]!.orderid}`)
        }
      }
    }
    // 3. Every call ends, within its deadline (and a poll's slack): the caller is answered.
    for (const c of calls) {
      if (c.ended || now <= c.startedAt + c.deadlineMs + DEADLINE_SLACK_MS) continue
      problems.push(`[3 outlives-deadline] call#${c.n} (${c.what}) on ${c.instance} has not answered ${now - c.startedAt} ms after it started (deadline ${c.deadlineMs} ms)`)
    }
    // 2. Each order's money is what its keys' requests moved: every transaction that moved money was
    //    made by a request of a known key (one of the model's calls, the back office, the order's
    //    creation), and the captured figure is the sum of what those requests captured.
    for (const order of book.orders.values()) {
      let captured = 0
      for (const tx of order.transactions) {
        if (tx.status !== "approved" && tx.status !== "processing") continue
        if (!book.bySerial.has(tx.serialNumber)) {
          problems.push(`[2 unexplained-money] order ${order.orderid} (${order.client_orderid}) has a ${tx.type} ${tx.amount ?? ""} ${tx.status} that no request of the model made`)
        }
        if (tx.status === "approved" && (tx.type === "capture" || tx.type === "sale")) captured += cents(tx.amount)
      }
      if (captured !== cents(order.captured)) {
        problems.push(`[2 figures] order ${order.orderid} captured ${order.captured}, its approved sale and captures add up to ${(captured / 100).toFixed(2)}`)
      }
    }
    return problems
}
