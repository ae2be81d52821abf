/**
 * Invariant checkpoints during a chaos run: at each look, every order view is checked from outside
 * (./invariants.ts) and the simulator's own record of broken invariants (`sim.checkInvariants()`,
 * which it checks on every ledger change) is read. Each distinct (order, invariant) counts once.
 */
import type { Simulator } from "@paykit/testkit"
import { viewViolations } from "./invariants"

export class InvariantWatch {
  private readonly seen = new Map<string, string>()
  checkpoints = 0
  ordersChecked = 0

  /** One checkpoint; `label` says when it was taken (progress, restart, end). */
  check(sim: Simulator, label: string): void {
    this.checkpoints++
    const orders = sim.orders()
    this.ordersChecked += orders.length
    for (const order of orders) {
      for (const v of viewViolations(order)) this.add(`${v.orderid}|${v.invariant}`, `${label}: order ${v.orderid} ${v.invariant}: ${v.detail}`)
    }
    for (const v of sim.checkInvariants()) {
      this.add(`${v.orderid}|simulator:${v.invariant}`, `${label}: order ${v.orderid} ${v.invariant} (the simulator's own check, during ${v.during}): ${v.detail}`)
    }
  }

  private add(key: string, text: string): void {
    if (!this.seen.has(key)) this.seen.set(key, text)
  }

  get violations(): number {
    return this.seen.size
  }

  examples(limit = 10): string[] {
    return [...this.seen.values()].slice(0, limit)
  }
}
