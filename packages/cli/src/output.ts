/**
 * Text output helpers: aligned tables and one-line JSON. Values are shown with JSON quoting when
 * they hold spaces, quotes or control characters, so an invisible difference (a trailing space, a
 * newline, an NFD accent) is visible.
 *
 * @packageDocumentation
 */

/** Renders rows as columns separated by two spaces; the header row is underlined. */
export function table(header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>, indent = "  "): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => indent + cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")
}

/** A value as shown in a table: bare when plain, JSON-quoted when it could hide something. */
export function shown(value: string | undefined): string {
  if (value === undefined) return "(not given)"
  if (value === "") return '""'
  if (/^[\x21\x23-\x7e]+$/.test(value)) return value
  // Combining marks and invisible characters are escaped, so NFC and NFD spellings look different.
  return JSON.stringify(value).replace(/[\u0300-\u036f\u200b-\u200f\u2028\u2029\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
}

/** One JSON document and a newline. */
export const json = (value: unknown): string => JSON.stringify(value, null, 2) + "\n"
