/**
 * What the merchant believes: for each (client_orderid, transaction type) the final status it
 * learned, from awaitFinal / status replies or from verified callbacks. Keyed by transaction type
 * (not just the order) so that out-of-order callbacks of one order (a sale's "approved" arriving
 * after its return's) cannot overwrite each other.
 */
export type Source = "await" | "status" | "callback" | "reconciled"

const FINAL = new Set(["approved", "declined", "filtered", "error"])

/** A money-moving request the merchant sent: what it asked to move (a full capture or return: the whole amount). */
export interface Intent {
  readonly clientOrderId: string
  readonly type: "sale" | "preauth" | "capture" | "return" | "rebill" | "payout"
  readonly amount: string
  readonly currency: string
}

export class Ledger {
  private readonly beliefs = new Map<string, { status: string; sources: Set<Source> }>()
  private readonly intents = new Map<string, Intent>()
  /** Two different final statuses learned for the same transaction. */
  conflicts = 0
  readonly learnedBy: Record<Source, number> = { await: 0, status: 0, callback: 0, reconciled: 0 }

  learn(clientOrderId: string, type: string | undefined, status: string, source: Source): void {
    if (type === undefined || !FINAL.has(status)) return
    const key = `${clientOrderId}|${type}`
    const known = this.beliefs.get(key)
    this.learnedBy[source]++
    if (known === undefined) {
      this.beliefs.set(key, { status, sources: new Set([source]) })
      return
    }
    known.sources.add(source)
    if (known.status !== status) this.conflicts++
  }

  /** Records what a request is meant to move, before it is sent (a resend records the same again). */
  intend(intent: Intent): void {
    this.intents.set(`${intent.clientOrderId}|${intent.type}`, intent)
  }

  /** Every money-moving request the merchant sent, one per (client_orderid, type). */
  allIntents(): Intent[] {
    return [...this.intents.values()]
  }

  belief(clientOrderId: string, type: string): string | undefined {
    return this.beliefs.get(`${clientOrderId}|${type}`)?.status
  }
}
