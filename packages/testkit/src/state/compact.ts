/**
 * Keeping an order small (≤ 1 KB per stored order: BENCHMARKS.md, order-heap). Two costs hide in strings taken from
 * a request: V8 makes a value of 13 characters or more parsed out of a form body a *slice* of the
 * body, so a stored `client_orderid` kept the whole request body (~700 bytes) alive; and the same
 * currency, amount, e-mail, URLs and card are stored again with every order. {@link own} copies a
 * string out of its body; {@link intern} shares equal values between orders through a bounded cache.
 *
 * @packageDocumentation
 */
import type { CardData } from "../rules/cards"
import { own } from "../http/own"

/** How many distinct values each cache keeps before it starts over (a bound on its own memory). */
const CACHE_SIZE = 4096

const strings = new Map<string, string>()

/**
 * One shared flat copy of a value many orders repeat (currency, amount, e-mail, URLs, the request
 * fingerprint of a test card). Bounded: the cache starts over once it holds {@link CACHE_SIZE}
 * values, which costs sharing, never correctness.
 */
export function intern(value: string): string {
  const known = strings.get(value)
  if (known !== undefined) return known
  if (strings.size >= CACHE_SIZE) strings.clear()
  const copy = own(value)
  strings.set(copy, copy)
  return copy
}

/** {@link intern} for an optional value. */
export function internOptional(value: string | undefined): string | undefined {
  return value === undefined ? undefined : intern(value)
}

const cards = new Map<string, CardData>()

/**
 * The shared record of a card already seen with this expiry and holder (the fingerprint stands for
 * the PAN, from which the masked number, BIN, brand and outcome follow), or undefined.
 */
export function knownCard(fingerprint: string, expireMonth: string, expireYear: string, holder: string | undefined): CardData | undefined {
  const known = cards.get(fingerprint)
  return known !== undefined && known.expireMonth === expireMonth && known.expireYear === expireYear && known.holder === holder ? known : undefined
}

/**
 * One shared record per distinct card (same fingerprint, expiry, holder and outcome): a sandbox
 * charges the same test cards over and over. Card data is immutable once taken.
 */
export function internCard(card: CardData): CardData {
  const known = cards.get(card.fingerprint)
  if (
    known !== undefined &&
    known.expireMonth === card.expireMonth &&
    known.expireYear === card.expireYear &&
    known.holder === card.holder &&
    known.outcome === card.outcome &&
    known.masked === card.masked
  ) {
    return known
  }
  if (cards.size >= CACHE_SIZE) cards.clear()
  const base = {
    masked: intern(card.masked),
    bin: intern(card.bin),
    last4: intern(card.last4),
    brand: card.brand,
    expireMonth: intern(card.expireMonth),
    expireYear: intern(card.expireYear),
    outcome: card.outcome,
    fingerprint: own(card.fingerprint)
  }
  const shared: CardData = card.holder === undefined ? base : { ...base, holder: intern(card.holder) }
  cards.set(shared.fingerprint, shared)
  return shared
}
