/**
 * The Schemas a verified callback's fields are checked against: the signed `status`, `orderid` and
 * `client_orderid`, and the claims `type`, `amount` and `currency` when present. `verify.ts` loads
 * this module with the first callback it verifies, so importing `@paykit/client` loads no Schema
 * (docs/decisions.md#22-packages-a-team-installs).
 *
 * @packageDocumentation
 */
import { Amount, ClientOrderId, Currency, OrderId, Status } from "@paykit/contracts"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { describeIssue } from "../call/classify"

const Signed = Schema.Struct({ status: Status, orderid: OrderId, client_orderid: ClientOrderId })
const decodeSigned = Schema.decodeUnknownEither(Signed, { onExcessProperty: "ignore" })
const Claims = Schema.Struct({
  type: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(32)), { exact: true }),
  amount: Schema.optionalWith(Amount, { exact: true }),
  currency: Schema.optionalWith(Currency, { exact: true })
})
const decodeClaims = Schema.decodeUnknownEither(Claims, { onExcessProperty: "ignore" })

/** A callback's fields checked: its signed `status`, or the first field that breaks its rule (the value never shown). */
export function checkCallbackFields(fields: Readonly<Record<string, string>>): Either.Either<Status, { readonly field: string; readonly rule: string }> {
  const signed = decodeSigned(fields)
  const claimed = decodeClaims(fields)
  const broken = Either.isLeft(signed) ? signed.left : Either.isLeft(claimed) ? claimed.left : undefined
  if (broken !== undefined || Either.isLeft(signed)) return Either.left(broken === undefined ? { field: "input", rule: "invalid" } : describeIssue(broken))
  return Either.right(signed.right.status)
}
