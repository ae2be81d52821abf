/**
 * What a call's attempts share, and the per-call options they come from. Its own module so the
 * pipeline and its Promise-native first attempt (`first-attempt.ts`) import it one way.
 *
 * @packageDocumentation
 */
import type { GroupPathForm, ReconcilePolicy, RetryPolicy } from "../config"
import type { PreparedOperation } from "../operations/table"
import type { InFlight } from "../transport/fetch"

/** Per-call options (the Promise facade and the Effect service take the same). */
export interface CallOptions {
  /** Overrides of the client's retry policy for this call. */
  readonly retry?: Partial<RetryPolicy> | undefined
  /** Per-attempt timeout in ms (also used by the reconciling `status`). */
  readonly timeoutMs?: number | undefined
  /** Send to the endpoint group instead of the endpoint (needs `endpointGroupId`); reconciliation asks there too. */
  readonly endpoint?: "endpoint" | "group" | undefined
  /** With `endpoint: "group"`: the path form for this call (default: the client's `groupPathForm`). */
  readonly groupPathForm?: GroupPathForm | undefined
  /** Overall limit of this call in ms, retries and reconciliation included (default: the client's `deadlineMs`). */
  readonly deadlineMs?: number | undefined
  /** Aborts the call; once bytes have left, the call reconciles (one `status` look) or ends in `OutcomeUnknown`. */
  readonly signal?: AbortSignal | undefined
  /** Money-moving calls: the key to replay or join (generated when absent, returned on every result and error). */
  readonly idempotencyKey?: string | undefined
  /** Overrides of the client's reconciliation policy for this call. */
  readonly reconcile?: Partial<ReconcilePolicy> | undefined
}

/** Everything one call's attempts share. */
export interface Attempts {
  readonly op: PreparedOperation
  readonly values: Readonly<Record<string, string>>
  readonly endpointId: string
  readonly options: CallOptions
  readonly timeoutMs: number
  readonly deadlineAt: number
  /** The money call's idempotency key (its fetches are tracked under it); `undefined` for reads. */
  readonly key: string | undefined
  /** Whether the call has its own span to annotate. */
  readonly traced: boolean
  count: number
  /**
   * Money-moving calls: the fetch in flight, aborted by the call's own interruption handler (one
   * handler per call instead of one per send). Reads leave it `undefined` and the transport
   * aborts on interruption itself.
   */
  readonly inFlight: InFlight | undefined
}
