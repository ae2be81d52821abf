/**
 * A payout's destination: exactly one of the destination fields, the rule the payout operations
 * and the hosted payout form both apply.
 *
 * @packageDocumentation
 */
import { SimError } from "../http/replies"
import type { Fields } from "../http/validation"

/** The destination fields of a payout (docs/decisions.md#d16-one-payout-destination, docs/decisions.md#d16w-wallet-and-stored-card-payouts): exactly one is sent. */
const DESTINATIONS = ["credit_card_number", "destination-card-ref-id", "account_number", "destination_phone", "wallet_id"] as const

/**
 * A payout names exactly one destination; none or several → payout-destination naming the fields
 * given; `wallet_provider` comes only with `wallet_id`. Returns a key that tells two destinations
 * apart, and the PAN when the destination is a card.
 */
export function payoutDestination(fields: Fields): { key: string; pan?: string } {
  const clientOrderId = fields["client_orderid"]
  const named = DESTINATIONS.filter((name) => fields[name] !== undefined)
  if (named.length !== 1) {
    const given = named.length === 0 ? "none was given" : `got ${named.join(" and ")}`
    throw new SimError("payout-destination", `destination: exactly one of ${DESTINATIONS.join(", ")} is required (${given})`, clientOrderId)
  }
  if (fields["wallet_provider"] !== undefined && fields["wallet_id"] === undefined) {
    throw new SimError("invalid-field", "wallet_provider: only with wallet_id", clientOrderId)
  }
  const name = named[0]!
  const value = fields[name]!
  switch (name) {
    case "credit_card_number":
      return { key: "card", pan: value }
    case "wallet_id":
      // The provider is part of the destination: the same account id at two wallets is two receivers.
      return { key: `wallet:${fields["wallet_provider"] ?? ""}:${value}` }
    default:
      return { key: `${name}:${value}` }
  }
}
