/**
 * A fast path for input validation. The contract request Schemas are plain structs of strings
 * with refinements (length, pattern) and literal unions, with no transformations. For those, this
 * module compiles the Schema's own AST once into a flat checker that runs the very same refinement
 * filters, without building a parse tree. When it says "valid", the Schema would too; when it
 * says anything else (or meets a node it does not know), the pipeline runs the full Schema decoder,
 * which produces the exact error. So semantics are the Schema's; only the happy path is faster.
 *
 * @packageDocumentation
 */
import { stringFilterRule } from "@paykit/contracts"
import * as AST from "effect/SchemaAST"

/** `true` when the value certainly passes the Schema; `false` means "ask the Schema". */
type FastCheck = (input: Record<string, unknown>) => boolean

type ValueCheck = (value: unknown) => boolean

const OPTIONS: AST.ParseOptions = {}

function compileValue(ast: AST.AST): ValueCheck | undefined {
  switch (ast._tag) {
    case "StringKeyword":
      return (v) => typeof v === "string"
    case "NumberKeyword":
      return (v) => typeof v === "number"
    case "Literal": {
      const literal = ast.literal
      return (v) => v === literal
    }
    case "Union": {
      const members = ast.types.map(compileValue)
      if (members.some((m) => m === undefined)) return undefined
      const checks = members as Array<ValueCheck>
      return (v) => checks.some((c) => c(v))
    }
    case "Refinement": {
      const rule = stringRuleOf(ast)
      if (rule !== undefined) return (v) => passesRule(rule, v)
      const from = compileValue(ast.from)
      if (from === undefined) return undefined
      const refinement = ast
      return (v) => from(v) && refinement.filter(v, OPTIONS, refinement)._tag === "None"
    }
    default:
      return undefined
  }
}

/** What a chain of Effect's string filters over `Schema.String` asks: length bounds and patterns. */
interface StringRule {
  readonly min: number
  readonly max: number
  readonly regexes: ReadonlyArray<RegExp>
}

/**
 * A chain of Effect's string filters over `Schema.String` (what nearly every contract field is) read
 * as one {@link StringRule}, tested by {@link passesRule}. Every filter in the chain must be one of
 * them; else `undefined` and the filters are called.
 */
function stringRuleOf(ast: AST.Refinement): StringRule | undefined {
  let min = 0
  let max = Number.POSITIVE_INFINITY
  const regexes: Array<RegExp> = []
  let node: AST.AST = ast
  while (node._tag === "Refinement") {
    const rule = stringFilterRule(node)
    if (rule === undefined) return undefined
    if ("min" in rule) min = Math.max(min, rule.min)
    else if ("max" in rule) max = Math.min(max, rule.max)
    else regexes.push(rule.regex)
    node = node.from
  }
  return node._tag === "StringKeyword" ? { min, max, regexes } : undefined
}

/**
 * A value against a {@link StringRule}: the length bounds compared and each pattern tested as the
 * filters do (a pattern's `lastIndex` reset first, as Effect's `pattern` does), without a call and
 * an `Option` per filter.
 */
function passesRule(rule: StringRule, v: unknown): boolean {
  if (typeof v !== "string" || v.length < rule.min || v.length > rule.max) return false
  const regexes = rule.regexes
  for (let i = 0; i < regexes.length; i++) {
    const regex = regexes[i]!
    regex.lastIndex = 0
    if (!regex.test(v)) return false
  }
  return true
}

interface FieldCheck {
  readonly name: string
  readonly optional: boolean
  /** The field's string filters, when that is all it has: tested in the loop, without a call through `check`. */
  readonly rule: StringRule | undefined
  readonly check: ValueCheck
}

/** A present value against its field's check. */
const passes = (field: FieldCheck, value: unknown): boolean => field.rule !== undefined ? passesRule(field.rule, value) : field.check(value)

/** A struct's fields, each with its compiled check; `undefined` for shapes the fast paths do not handle. */
function compileFields(ast: AST.AST): ReadonlyArray<FieldCheck> | undefined {
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0) return undefined
  const fields: Array<FieldCheck> = []
  for (const ps of ast.propertySignatures) {
    if (typeof ps.name !== "string") return undefined
    const rule = ps.type._tag === "Refinement" ? stringRuleOf(ps.type) : undefined
    const check = rule !== undefined ? (v: unknown) => passesRule(rule, v) : compileValue(ps.type)
    if (check === undefined) return undefined
    fields.push({ name: ps.name, optional: ps.isOptional, rule, check })
  }
  return fields
}

/** Compiles a struct Schema's AST; `undefined` when it has shapes this fast path does not handle. */
export function compileFastCheck(ast: AST.AST): FastCheck | undefined {
  const fields = compileFields(ast)
  if (fields === undefined) return undefined
  const known = new Set(fields.map((f) => f.name))
  return (input) => {
    let present = 0
    for (const field of fields) {
      const value = input[field.name]
      if (value === undefined) {
        // exact optional: absent is fine, an explicit `undefined` value is not (the Schema decides).
        if (!field.optional || field.name in input) return false
        continue
      }
      if (!passes(field, value)) return false
      present++
    }
    // Excess properties are an error in the Schema decoder: let it report them.
    let keys = 0
    for (const key in input) {
      if (!known.has(key)) return false
      keys++
    }
    return keys === present
  }
}

/** The decoded value when the fast path can vouch for it; `undefined` means "ask the Schema". */
type FastDecode = (input: unknown) => Record<string, unknown> | undefined

/**
 * Compiles a reply struct's AST into a decoder for the Schema decoder's happy path with
 * `onExcessProperty: "ignore"`: the same checks as {@link compileFastCheck} on the known fields, and
 * a new object holding only them, in the Schema's order (as the Schema's own output). Anything it
 * cannot vouch for (a failing value, an unknown shape) goes to the full decoder, which also writes
 * the error. `undefined` when the AST has shapes this fast path does not handle.
 */
export function compileFastDecode(ast: AST.AST): FastDecode | undefined {
  const fields = compileFields(ast)
  if (fields === undefined) return undefined
  return (input) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
    const record = input as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const field of fields) {
      const value = record[field.name]
      if (value === undefined) {
        if (!field.optional || field.name in record) return undefined
        continue
      }
      if (!passes(field, value)) return undefined
      out[field.name] = value
    }
    return out
  }
}
