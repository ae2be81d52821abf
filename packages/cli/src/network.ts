/**
 * Why a `fetch` failed, in a few words (`ECONNREFUSED`, `timeout`, `bad port`), for one-line errors.
 *
 * @packageDocumentation
 */

/** The most specific reason a fetch rejected with. */
export function networkCause(error: unknown): string {
  const e = error as { name?: string; message?: string; cause?: { code?: string; message?: string } }
  if (e.name === "TimeoutError") return "timeout"
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(error)
}
