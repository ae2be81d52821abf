/**
 * What the checking proxy writes anywhere (log, dashboard, recording) goes through here: card
 * numbers masked to BIN and last four, control characters (a forged second log line) replaced.
 *
 * @packageDocumentation
 */
import { luhnValid } from "@paykit/contracts/card-data"

/** A card number as BIN + `***` + last four (or `***` when too short to be one). */
export function maskCardNumber(value: string): string {
  return value.length >= 13 ? `${value.slice(0, 6)}***${value.slice(-4)}` : "***"
}

/** Masks every run of 13–19 digits that passes Luhn (a card number) in a text. */
export function maskCardRuns(text: string): string {
  return text.replace(/(?<![0-9])[0-9]{13,19}(?![0-9])/g, (run) => (luhnValid(run) ? maskCardNumber(run) : run))
}

/** Readable text for one line: control characters become `?`, runs of spaces one space, card numbers masked, at most `max` characters. */
export function cleanText(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = maskCardRuns(text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, "?").replace(/ {2,}/g, " ").trim())
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}
