/**
 * Steps of a model run as plain data: what a printed counterexample lists and what `replay` runs.
 * Amounts are resolved (decimal strings); orders are named by their index in creation order.
 */

/** Test cards by what they do (the testkit's test-card table). */
export type CardName = "approved" | "declined" | "error" | "filtered"

export const CARD_NUMBER: Record<CardName, string> = {
  approved: "4111111111111111",
  declined: "4000000000000002",
  error: "4000000000000119",
  filtered: "4100000000000019"
}

export type Step =
  | { readonly op: "sale" | "preauth"; readonly amount: string; readonly card: CardName }
  | { readonly op: "capture" | "void" | "return"; readonly order: number; readonly amount?: string }
  | { readonly op: "status" | "resend"; readonly order: number }
  | { readonly op: "advance"; readonly ms: number }
  | { readonly op: "restart" }
  /**
   * Two steps sent at once. `order` is the resolution order fc.scheduler chose for the pair's
   * scheduled points (1-based task ids, as `fc.schedulerFor` takes them), filled in when it ran.
   */
  | { readonly op: "pair"; readonly a: Step; readonly b: Step; order?: number[] }

/** One step as TypeScript source: `{ op: "capture", order: 0, amount: "30.00" }`. */
export function stepText(step: Step): string {
  const parts = Object.entries(step).map(([key, value]) => {
    if (key === "a" || key === "b") return `${key}: ${stepText(value as Step)}`
    return `${key}: ${JSON.stringify(value)}`
  })
  return `{ ${parts.join(", ")} }`
}
