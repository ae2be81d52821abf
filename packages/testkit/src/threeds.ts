/**
 * The simulated 3-D Secure server. A transaction with the 3DS test card (4000000000003220) waits
 * in this small state machine before it can be final:
 *
 * ```
 *            upload-method-url-result (Y|N|U)
 *   method ─────────────────────────────────▶ challenge
 *     │  ╲                                       │
 *     │   ╲ ACS page pass/fail, upload-pares     │ ACS page pass/fail, upload-cres, upload-pares
 *     │    ╲                                     ▼
 *     └─────────────────────────────────▶ passed | failed   (final states; the transaction then
 *                                                           becomes approved | declined)
 * ```
 *
 * - `method`: the 3DS method step is pending. Only here is a method-URL result accepted.
 * - `challenge`: the cardholder challenge is pending. A CRes is accepted only here (a CRes ends
 *   a 3DS 2.x challenge, which follows the method step).
 * - A PaRes (3DS 1.0.2, which has no method step) is accepted in `method` or `challenge`.
 * - The ACS page can be completed from `method` or `challenge` (a browser does the method step
 *   implicitly).
 * - `passed` / `failed` accept nothing more. Every upload that does not fit is a 400
 *   `threeds-state`, as is any upload for an order without 3DS.
 *
 * A CRes or PaRes passes when it says `Y`: either the literal value `Y`, or base64url JSON whose
 * `transStatus` is `Y` (e.g. `eyJ0cmFuc1N0YXR1cyI6IlkifQ`). Anything else fails authentication.
 *
 * @packageDocumentation
 */
import type { Order } from "./state/orders"
import { SimError } from "./replies"

/** The states of the simulated 3DS flow. */
export type ThreeDSStateName = "method" | "challenge" | "passed" | "failed"

/** The 3DS state of an order. */
export interface ThreeDSState {
  state: ThreeDSStateName
  /** The method step result, once uploaded. */
  compInd?: "Y" | "N" | "U"
  /** How the result arrived. */
  via?: "acs-page" | "cres" | "pares"
}

/** Which upload moved (or tried to move) the state. */
export type ThreeDSEvent = "method-result" | "cres" | "pares" | "acs-page"

const allowed: Record<ThreeDSEvent, ReadonlyArray<ThreeDSStateName>> = {
  "method-result": ["method"],
  cres: ["challenge"],
  pares: ["method", "challenge"],
  "acs-page": ["method", "challenge"]
}

/** Refuses an event that does not fit the order's 3DS state with `threeds-state`. */
export function assertFits(order: Order, event: ThreeDSEvent): asserts order is Order & { threeDS: ThreeDSState } {
  const state = order.threeDS?.state
  if (state === undefined) throw new SimError("threeds-state", `orderid: order ${order.orderid} has no 3-D Secure step`, order.clientOrderId)
  if (!allowed[event].includes(state)) {
    throw new SimError("threeds-state", `orderid: the 3-D Secure ${event} does not fit state ${state} of order ${order.orderid} (allowed in ${allowed[event].join(", ")})`, order.clientOrderId)
  }
}

/** Whether a CRes or PaRes value means "authenticated". */
export function authenticated(value: string): boolean {
  if (value === "Y") return true
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, "base64url").toString("utf8"))
    return typeof decoded === "object" && decoded !== null && (decoded as { transStatus?: unknown }).transStatus === "Y"
  } catch {
    return false
  }
}

/** The error of a failed 3DS authentication. */
export const THREEDS_FAILED = { status: "declined", errorCode: "3ds-failed", errorMessage: "3-D Secure authentication failed" } as const
