/**
 * The client's method table, derived from the contracts' operation table: one mapped type gives
 * every method its input, result and error types, and {@link preparedOperations} precomputes, once
 * per process, everything the hot path needs (input decoder, reply decoder, id field names).
 *
 * @packageDocumentation
 */
import {
  crossFieldFilter,
  crossFieldRules,
  operations,
  operationSchemas,
  structFields,
  ValidationErrorResponse,
  ServerErrorResponse,
  type OperationAuth,
  type OperationId,
  type RetryClass,
  type Status,
  type TransactionType as ContractsTransactionType
} from "@paykit/contracts"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as ParseResult from "effect/ParseResult"
import type { ReadError, ReconcileError } from "../errors"
import { compileFastCheck, compileFastDecode } from "./validate"

type Ops = typeof operations
type Schemas = typeof operationSchemas

/** The camelCase client method names (`sale`, `status`, …), the table's `method` column. */
export type MethodName = Ops[OperationId]["method"]

/** The operationId whose method is `M`. */
export type OperationOf<M extends MethodName> = { [K in OperationId]: Ops[K]["method"] extends M ? K : never }[OperationId]

type RequestWire<Op extends OperationId> = Schema.Schema.Encoded<Schemas[Op]["request"]>

/**
 * Input of an operation: the request's wire fields (gateway names) without `control`; `login`,
 * where the request has one, is optional and filled from the client's config.
 */
export type OperationInput<Op extends OperationId> =
  & Omit<RequestWire<Op>, "control" | "login">
  & ("login" extends keyof RequestWire<Op>
    ? {
        /** Overrides the configured merchant login for this call. */
        readonly login?: string
      }
    : unknown)

type IdFields = "paynet-order-id" | "end-point-id" | "error-code"

/** Turns the gateway's sometimes-numeric ids into strings, as the client normalises them. */
export type Normalized<T> = {
  readonly [K in keyof T]: K extends IdFields ? (T[K] extends infer V ? (V extends number ? string : V) : never) : T[K]
}

/** The decoded 200 reply of an operation, ids normalised to strings. */
export type OperationReply<Op extends OperationId> = Op extends "STATUS"
  ? Normalized<Schema.Schema.Type<Schemas[Op]["response"]>> & StatusExtras
  : Normalized<Schema.Schema.Type<Schemas[Op]["response"]>>

/**
 * The last transaction's type as `status` names it: the known ones of the spec
 * (`info.x-paykit-transaction-types`: a `chargeback` after settlement,
 * docs/decisions.md#17-chargebacks; `return` for a refund) typed, any other word the gateway adds
 * still accepted.
 */
export type TransactionType = ContractsTransactionType

/** What the client types in `status` beyond the contracts' plain strings. */
// A type alias (not an interface) so replies stay assignable to index-signature records.
export type StatusExtras = {
  /** While a 3DS challenge is pending: an auto-submitting form to the issuer, beside `redirect-to`. */
  readonly html?: string
  /** Type of the order's last transaction; `chargeback` once the order was charged back (with `chargeback-amount`). */
  readonly "transaction-type"?: TransactionType
  /** Charged back so far, in major units (present once the order has a chargeback, docs/decisions.md#17-chargebacks). */
  readonly "chargeback-amount"?: string
}

/** The decoded `status` reply. */
export type StatusReply = OperationReply<"STATUS">

/**
 * Result of a money-moving call whose send had an unknown outcome, proven from the gateway's state:
 * `status` shows the order (or, on an existing order, a new transaction) matching the request.
 * `type` tells it apart from a direct reply.
 */
export interface Reconciled {
  /** Marks a reply rebuilt from `status` instead of the call's own reply. */
  readonly type: "reconciled"
  /** The order's status from the `status` reply. */
  readonly status: Status
  /** The gateway's order id. */
  readonly "paynet-order-id": string
  /** The merchant's order id (`client_orderid`). */
  readonly "merchant-order-id": string
  /** The full status reply, e.g. `redirect-to` for a 3DS sale, `captured-amount` after a capture. */
  readonly statusReply: StatusReply
  /** The order before the send (calls on an existing order), to compare with `statusReply`. */
  readonly statusBefore?: StatusReply | undefined
  /** `_tag` of the failure that made the outcome unknown (`Timeout`, `TransportError`, `GatewayServerError`, `DecodeError`). */
  readonly reason: string
  /** The call's idempotency key. */
  readonly idempotencyKey: string
}

/** What every money-moving result carries besides the reply. */
export type Keyed = {
  /** The call's idempotency key (given or generated): call again with it to replay, never to repeat. */
  readonly idempotencyKey: string
}

/** What a method resolves to: the reply, or for money-moving operations the keyed reply or {@link Reconciled}. */
export type OperationResult<Op extends OperationId> = Ops[Op]["retry"] extends "reconcile"
  ? (OperationReply<Op> & Keyed) | Reconciled
  : OperationReply<Op>

/** The error channel of a method: reads fail with a call error, money-moving calls may also end in `OutcomeUnknown` or `ReconcileConflict`. */
export type OperationError<Op extends OperationId> = Ops[Op]["retry"] extends "reconcile" ? ReconcileError : ReadError

/**
 * The operation a call runs, as hooks, spans, logs and the intent ledger name it: an operation id of
 * the spec (`SALE`), or the name of an operation sent through `request()`
 * (docs/decisions.md#24-a-signed-escape-hatch).
 */
export type CallOperation = OperationId | (string & {})

/**
 * How a prepared call is signed: its operation's auth row, or for a `request()` call its own
 * control field list (digested as the spec's control rules digest theirs).
 */
export type PreparedAuth = OperationAuth | {
  readonly scheme: "control"
  /** Marks the field list as the caller's own (`request()`), not one of the spec's C1–C8. */
  readonly code: "request"
  readonly fields: ReadonlyArray<string>
}

/** Everything the pipeline precomputes for one operation (for a `request()` call: for that call). */
export interface PreparedOperation {
  readonly id: CallOperation
  /** The client method (what errors name), or a `request()` call's operation name. */
  readonly method: MethodName | (string & {})
  readonly path: string
  /** The gateway's endpoint-group path form of `path`: `/…/group/{endpointId}` (docs/decisions.md#16-endpoint-groups). */
  readonly groupPath: string
  readonly auth: PreparedAuth
  readonly retry: RetryClass
  readonly spanName: string
  /** Whether the request carries `login` (filled from config when absent). */
  readonly hasLogin: boolean
  /** Wire name of the merchant order id in this request (`client_orderid`, `client-orderid`, `client-order-id`). */
  readonly clientOrderIdField: string | undefined
  /** `true` when the request names an existing order (`orderid`): an unknown outcome is never resent. */
  readonly onExistingOrder: boolean
  /** Every field name of the request (no `control`), sorted: the request fingerprint's order. */
  readonly fieldNames: ReadonlyArray<string>
  readonly decodeInput: (input: unknown) => Either.Either<Record<string, string>, ParseResult.ParseError>
  /** The reply's fields the contract lists, as a new object (the caller may add to it). */
  readonly decodeReply: (body: unknown) => Either.Either<Record<string, unknown>, ParseResult.ParseError>
}

const CLIENT_ORDER_ID_FIELDS = ["client_orderid", "client-orderid", "client-order-id"] as const

function prepare(id: OperationId): PreparedOperation {
  const row = operations[id]
  const schemas = operationSchemas[id]
  const fields: Record<string, Schema.Struct.Field> = { ...structFields<Schema.Struct.Fields>(schemas.request) }
  delete fields["control"]
  const hasLogin = "login" in fields
  // `login` stays required in the Schema: the pipeline fills it from config before decoding. The
  // spec's cross-field rules (amount with currency, one payout destination…) apply before sending.
  const rules = crossFieldRules[row.request]
  const input = rules === undefined ? Schema.Struct(fields) : Schema.Struct(fields).pipe(Schema.filter(crossFieldFilter(rules)))
  const fullDecode = Schema.decodeUnknownEither(input as unknown as Schema.Schema<Record<string, string>>, {
    onExcessProperty: "error",
    errors: "first"
  })
  const fast = compileFastCheck(input.ast)
  const response = schemas.response as unknown as Schema.Schema<Record<string, unknown>>
  const fullReply = Schema.decodeUnknownEither(response, { onExcessProperty: "ignore" })
  // As for the input: the Schema's own checks on the happy path, the full decoder for anything else.
  const fastReply = compileFastDecode(response.ast)
  return {
    id,
    method: row.method,
    path: row.path,
    groupPath: row.path.replace("{endpointId}", "group/{endpointId}"),
    auth: row.auth,
    retry: row.retry,
    spanName: `paykit.${row.method}`,
    hasLogin,
    clientOrderIdField: CLIENT_ORDER_ID_FIELDS.find((f) => f in fields),
    onExistingOrder: "orderid" in fields && id !== "STATUS",
    fieldNames: Object.keys(fields).sort(),
    // The fast check runs the Schema's own refinements; anything it does not pass gets the full decoder.
    decodeInput: fast === undefined
      ? fullDecode
      : (value) => typeof value === "object" && value !== null && fast(value as Record<string, unknown>)
        ? Either.right(value as Record<string, string>)
        : fullDecode(value),
    decodeReply: fastReply === undefined
      ? fullReply
      : (body) => {
        const decoded = fastReply(body)
        return decoded === undefined ? fullReply(body) : Either.right(decoded)
      }
  }
}

/** The prepared table, built once at module load. */
export const preparedOperations: { readonly [K in OperationId]: PreparedOperation } = Object.fromEntries(
  (Object.keys(operations) as Array<OperationId>).map((id) => [id, prepare(id)])
) as { readonly [K in OperationId]: PreparedOperation }

// The contract types `error-code` as PayKit's table or the gateway's number; a refusal carrying a code
// outside both (a newer gateway, a proxy) is still a refusal, classified by its HTTP status, never a
// DecodeError: error bodies are read with any string or number as the code.
const anyCode = { "error-code": Schema.Union(Schema.String, Schema.Number) }
/** Decoder of a 400 body. */
export const decodeValidationError = Schema.decodeUnknownEither(Schema.Struct({ ...ValidationErrorResponse.fields, ...anyCode }))
/** Decoder of a 500 body. */
export const decodeServerError = Schema.decodeUnknownEither(Schema.Struct({ ...ServerErrorResponse.fields, ...anyCode }))
