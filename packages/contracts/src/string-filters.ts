/**
 * Effect's own string filters read back as the plain rule each tests, for the checkers that the
 * client and the simulator compile from the contract Schemas (a bound compared or a regex tested,
 * without a filter call and an `Option` per field).
 *
 * @packageDocumentation
 */
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"

/** What one of Effect's string filters asks of a string: a length bound or a pattern. */
export type StringFilterRule = { readonly min: number } | { readonly max: number } | { readonly regex: RegExp }

const OPTIONS: SchemaAST.ParseOptions = {}

/**
 * One of Effect's own string filters (`minLength`, `maxLength`, `pattern`) as the bound or regex it
 * tests; `undefined` for any other filter. A length bound is read from the filter's annotations and
 * then confirmed on the filter itself at the bound (a length filter's answer depends on the length
 * alone), so annotations that say something else than the filter does are never trusted. A pattern
 * is tested as Effect's `pattern` does: its `lastIndex` reset first.
 */
export function stringFilterRule(ast: SchemaAST.Refinement): StringFilterRule | undefined {
  const id = ast.annotations[SchemaAST.SchemaIdAnnotationId]
  const json = ast.annotations[SchemaAST.JSONSchemaAnnotationId] as { minLength?: unknown; maxLength?: unknown } | undefined
  const passes = (length: number) => ast.filter("a".repeat(length), OPTIONS, ast)._tag === "None"
  if (id === Schema.MinLengthSchemaId && typeof json?.minLength === "number" && Number.isInteger(json.minLength) && json.minLength >= 1 && json.minLength <= 1 << 16) {
    const min = json.minLength
    return passes(min) && !passes(min - 1) ? { min } : undefined
  }
  if (id === Schema.MaxLengthSchemaId && typeof json?.maxLength === "number" && Number.isInteger(json.maxLength) && json.maxLength >= 0 && json.maxLength <= 1 << 16) {
    const max = json.maxLength
    return passes(max) && !passes(max + 1) ? { max } : undefined
  }
  const pattern = ast.annotations[Schema.PatternSchemaId] as { regex?: unknown } | undefined
  if (id === Schema.PatternSchemaId && pattern?.regex instanceof RegExp) return { regex: pattern.regex }
  return undefined
}
