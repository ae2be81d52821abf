/**
 * A string copied out of what it was cut from. V8 makes a value of 13 characters or more parsed out
 * of a form body (or cut from a digest's hex) a *slice* of it, so keeping the value kept the whole
 * body alive. Here, on the wire's floor, because form parsing, the test-card rules and the order
 * store (../state/compact.ts) all copy such strings.
 *
 * @packageDocumentation
 */

/** V8 slices strings of this length and more instead of copying them. */
const SLICE_MIN = 13

/**
 * A copy of `value` that keeps nothing else alive (a flat string, not a slice of the request body or
 * a concatenation of parts). Short strings are always flat already.
 */
export function own(value: string): string {
  return value.length < SLICE_MIN ? value : (JSON.parse(JSON.stringify(value)) as string)
}
