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
 * - A PaRes (3DS 1.0.2, which has no method step) is accepted only in `method`, before anything
 *   of 3DS 2 happened.
 * - The flow's version is fixed by its first versioned upload: a method-URL result or a CRes makes
 *   it 3DS 2, a PaRes 3DS 1; the hosted form (whose browser does the method step) makes it 3DS 2.
 *   An upload of the other version is a 400 `threeds-version-mismatch` (docs/decisions.md#12-3-d-secure).
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
import { SimError } from "../http/replies"

/** The states of the simulated 3DS flow. */
export type ThreeDSStateName = "method" | "challenge" | "passed" | "failed"

/** The 3DS state of an order. */
export interface ThreeDSState {
  state: ThreeDSStateName
  /** The method step result, once uploaded. */
  compInd?: "Y" | "N" | "U"
  /** How the result arrived. */
  via?: "acs-page" | "cres" | "pares"
  /** The 3-D Secure version of the flow, once an upload fixed it. */
  version?: 1 | 2
}

/** Which upload moved (or tried to move) the state. */
type ThreeDSEvent = "method-result" | "cres" | "pares" | "acs-page"

const allowed: Record<ThreeDSEvent, ReadonlyArray<ThreeDSStateName>> = {
  "method-result": ["method"],
  cres: ["challenge"],
  pares: ["method"],
  "acs-page": ["method", "challenge"]
}

/** The 3-D Secure version each upload belongs to (the ACS page serves both). */
const versionOf: Record<ThreeDSEvent, 1 | 2 | undefined> = { "method-result": 2, cres: 2, pares: 1, "acs-page": undefined }

/** What {@link assertFits} reads of an order. */
interface WithThreeDS {
  readonly orderid: string
  readonly clientOrderId: string
  threeDS?: ThreeDSState
}

/**
 * Refuses an event of the other 3DS version with `threeds-version-mismatch`, and one that does not
 * fit the order's 3DS state with `threeds-state`; an accepted versioned upload fixes the version.
 */
export function assertFits<O extends WithThreeDS>(order: O, event: ThreeDSEvent): asserts order is O & { threeDS: ThreeDSState } {
  const state = order.threeDS?.state
  if (state === undefined) throw new SimError("threeds-state", `orderid: order ${order.orderid} has no 3-D Secure step`, order.clientOrderId)
  const version = versionOf[event]
  const flow = order.threeDS!.version
  if (version !== undefined && flow !== undefined && version !== flow) {
    throw new SimError("threeds-version-mismatch", `orderid: a 3-D Secure ${version === 1 ? "1 PaRes" : `2 ${event}`} does not fit the 3-D Secure ${flow} flow of order ${order.orderid}`, order.clientOrderId)
  }
  if (!allowed[event].includes(state)) {
    throw new SimError("threeds-state", `orderid: the 3-D Secure ${event} does not fit state ${state} of order ${order.orderid} (allowed in ${allowed[event].join(", ")})`, order.clientOrderId)
  }
  if (version !== undefined) order.threeDS!.version = version
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
