/**
 * What the checking proxy writes anywhere (log, dashboard, recording) goes through here: card
 * numbers masked to BIN and last four, control characters (a forged second log line) replaced.
 *
 * @packageDocumentation
 */
import { maskPan, maskPans } from "@paykit/contracts/card-data"

/** A card number as `maskPan` writes it (`@paykit/contracts/card-data`: BIN + `*` + last four). */
export function maskCardNumber(value: string): string {
  return maskPan(value)
}

/** Masks every card number (a Luhn-valid run of digits) in a text, as `maskPans` does. */
export function maskCardRuns(text: string): string {
  return maskPans(text)
}

/** Readable text for one line: control characters become `?`, runs of spaces one space, card numbers masked, at most `max` characters. */
export function cleanText(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = maskCardRuns(text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?").replace(/ {2,}/g, " ").trim())
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}
