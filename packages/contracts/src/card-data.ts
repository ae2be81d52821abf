/**
 * Card data, written once for every package: the Luhn check, the one masking rule for a card
 * number, masking of card numbers inside free text, and the wire names of the card fields.
 * `@paykit/contracts/card-data` loads no Effect runtime.
 *
 * The masking rule (`maskPan`): a card number of 13–19 digits keeps its BIN (first six digits) and
 * its last four, every digit between becomes `*` (`411111******1111`); any other value — shorter,
 * longer or not all digits — becomes `*` throughout, since BIN + last four would show most of it.
 *
 * @packageDocumentation
 */

/**
 * The Luhn check of a card number. Digits only: an empty string or any other character fails.
 *
 * @example luhnValid("4111111111111111") // true
 */
export function luhnValid(digits: string): boolean {
  if (digits.length === 0) return false
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48
    if (d < 0 || d > 9) return false
    if (double) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
    double = !double
  }
  return sum % 10 === 0
}

const MASKABLE = /^[0-9]{13,19}$/

/**
 * The one display form of a card number: 13–19 digits as BIN + `*` + last four
 * (`411111******1111`); anything else as `*` of the same length.
 */
export function maskPan(pan: string): string {
  if (!MASKABLE.test(pan)) return "*".repeat(pan.length)
  return pan.slice(0, 6) + "*".repeat(pan.length - 10) + pan.slice(-4)
}

// Digit runs not preceded or followed by another digit (letters and underscores may touch them,
// which `\b` would not see: `pan=4111…x`, `ccn_4111…`). Groups may be split by up to two spaces,
// dashes, dots or no-break spaces (`4111.1111.1111.1111`): a PAN is echoed as it was typed.
const DIGIT_RUN = /(?<![0-9])[0-9](?:[ .\u00a0-]{0,2}[0-9]){11,}(?![0-9])/g
const RUN_SEPARATORS = /[ .\u00a0-]/g
// A UUID (8-4-4-4-12 hex: the gateway's serial numbers) is an identifier, never a card number, though
// its digit groups joined by dashes can pass the Luhn check: taken whole, before a digit run can
// start inside it, and written as it is.
const UUID_SOURCE = "(?<![0-9A-Fa-f-])[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}(?![0-9A-Fa-f-])"
const UUID_OR_DIGIT_RUN = new RegExp(`${UUID_SOURCE}|${DIGIT_RUN.source}`, "g")

function maskRun(run: string): string {
  const digits = run.replace(RUN_SEPARATORS, "")
  if (digits.length < 12) return run
  if (digits.length <= 19 && luhnValid(digits)) return maskPan(digits)
  // A longer run may hide a PAN inside it (`ref 00004111111111111111`): mask every Luhn-valid window.
  for (let len = 19; len >= 12; len--) {
    for (let start = 0; start + len <= digits.length; start++) {
      const window = digits.slice(start, start + len)
      if (luhnValid(window)) return maskRun(digits.slice(0, start)) + maskPan(window) + maskRun(digits.slice(start + len))
    }
  }
  return run
}

function hasTwelveDigits(text: string): boolean {
  let count = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 48 && c <= 57 && ++count === 12) return true
  }
  return false
}

/**
 * Masks every card-number-shaped run in free text: a run of 12–19 digits (maybe split by spaces,
 * dashes, dots or no-break spaces, maybe glued to letters) that passes the Luhn check is written
 * with {@link maskPan}; a longer run has each Luhn-valid 12–19 digit window inside it masked. A
 * UUID (a serial number) is left as it is. Text with fewer than twelve digits is returned as it is.
 */
export function maskPans(text: string): string {
  if (!hasTwelveDigits(text) || isUuid(text)) return text
  return text.replace(UUID_OR_DIGIT_RUN, (run: string) => (isUuid(run) ? run : maskRun(run)))
}

/**
 * Whether `text` is one UUID (8-4-4-4-12 hex), the shape of the gateway's serial numbers: an
 * identifier, left as it is by {@link maskPans}. Its letters are hex digits, so no card-security
 * label (`cvv`, `cvc`, `cid`, `csc`, `security code`…) can be spelled in it either.
 *
 * @example isUuid("2f0c5b8e-1d3a-4c6e-9b7f-0a1b2c3d4e5f") // true
 */
export function isUuid(text: string): boolean {
  // Every reply's serial number is asked this: a look at each of 36 characters, without a regex.
  if (text.length !== 36) return false
  for (let i = 0; i < 36; i++) {
    const c = text.charCodeAt(i)
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false // "-"
    } else if (!((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102))) return false // 0-9 A-F a-f
  }
  return true
}

/** Wire names of the fields that carry a card number (request bodies and replies). */
export const CARD_NUMBER_FIELDS = ["credit_card_number", "credit-card-number", "destination-card-no", "sending-card-number"] as const

/** Wire names of the fields that carry a card security code. */
export const CARD_SECURITY_FIELDS = ["cvv2"] as const

/** Wire names of the fields that carry a card's expiry. */
export const CARD_EXPIRY_FIELDS = ["expire_month", "expire_year"] as const

/** A field that carries a card number. */
export type CardNumberField = (typeof CARD_NUMBER_FIELDS)[number]

const CARD_NUMBER_SET: ReadonlySet<string> = new Set(CARD_NUMBER_FIELDS)
const CARD_SECURITY_SET: ReadonlySet<string> = new Set(CARD_SECURITY_FIELDS)

/** Whether a wire field carries a card number. */
export const isCardNumberField = (name: string): name is CardNumberField => CARD_NUMBER_SET.has(name)

/** Whether a wire field carries a card security code. */
export const isCardSecurityField = (name: string): boolean => CARD_SECURITY_SET.has(name)
