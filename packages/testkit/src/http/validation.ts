/**
 * Request validation: the Accept and Content-Type rules, form parsing and decoding by the
 * operation's request Schema. Messages name the field and the rule and never echo a card number
 * or CVV (the contracts' CardNumber and Cvv2 Schemas override their messages for that reason).
 *
 * @packageDocumentation
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { CARD_NUMBER_FIELDS, luhnValid } from "@paykit/contracts/card-data"
import { crossFieldIssues, crossFieldRules, operations, operationSchemas, stringFilterRule, structFields, type OperationId } from "@paykit/contracts"
import { SimError, PAY_JSON } from "./replies"
import { own } from "./own"

/** A decoded form body: one string per field (duplicates are refused). */
export type Fields = Readonly<Record<string, string>>

/**
 * `Accept` must be `application/vnd.pay+json` and nothing else: the interface names it "the only
 * allowed value" (docs/decisions.md#d8a-the-accept-header), so a list that contains it, a wildcard or a parameter is refused.
 * Media types compare case-insensitively and the header's surrounding spaces do not count.
 */
export function checkAccept(accept: string | null): void {
  if (accept === null) throw new SimError("not-acceptable", `Accept: required, must be ${PAY_JSON}`)
  // Fast path first: clients send exactly the one value.
  if (accept === PAY_JSON || accept.trim().toLowerCase() === PAY_JSON) return
  throw new SimError("not-acceptable", `Accept: must be exactly ${PAY_JSON} (the interface's only allowed value; no list, wildcard or parameter)`)
}

/** The body must be a form; `charset` parameters are fine. */
export function checkContentType(contentType: string | null): void {
  // Fast path first: clients send exactly the one value.
  if (contentType === "application/x-www-form-urlencoded") return
  if (contentType !== null) {
    const base = contentType.split(";")[0]!.trim().toLowerCase()
    if (base === "application/x-www-form-urlencoded") return
  }
  throw new SimError("unsupported-media-type", "Content-Type: must be application/x-www-form-urlencoded")
}

/** Parses a form body; a field named twice is an invalid-field error naming it. */
export function parseForm(text: string): { fields: Fields; pairs: Array<[string, string]> } {
  const fields: Record<string, string> = Object.create(null)
  const pairs: Array<[string, string]> = []
  for (const [name, value] of new URLSearchParams(text)) {
    if (name in fields) throw duplicate(name)
    fields[name] = value
    pairs.push([name, value])
  }
  return { fields, pairs }
}

function duplicate(name: string): SimError {
  return new SimError("invalid-field", `${name.slice(0, 64)}: is given more than once`)
}

/**
 * Every field name of the operations' request Schemas, as the one string of that name: a name cut
 * out of a body is replaced by it, so storing and reading it under that name needs no string-table
 * lookup. Fixed at load (a body's own names never enter it).
 */
const FIELD_NAMES = new Map<string, string>()
for (const entry of Object.values(operationSchemas)) {
  for (const name of Object.keys(structFields<object>(entry.request))) FIELD_NAMES.set(name, name)
}
FIELD_NAMES.set("control", "control")

/**
 * The same names by length: a plain name is matched where it stands in the body (`startsWith` at
 * its offset) instead of being cut out first, so the ~20 names of a sale cost no string each.
 */
const NAMES_BY_LENGTH: Array<string[] | undefined> = []
for (const name of FIELD_NAMES.keys()) (NAMES_BY_LENGTH[name.length] ??= []).push(name)

/** The known field name written plainly at `text[from, to)`, or undefined. */
function knownName(text: string, from: number, to: number): string | undefined {
  const candidates = NAMES_BY_LENGTH[to - from]
  if (candidates === undefined) return undefined
  const first = text.charCodeAt(from)
  for (const name of candidates) if (name.charCodeAt(0) === first && text.startsWith(name, from)) return name
  return undefined
}

/**
 * Escaped values decoded before, by their escaped text: a sandbox sends the same e-mail, URLs,
 * phone, names and description over and over, and decoding one builds a string of pieces that
 * later readers flatten again. The decoded value given out is one flat shared string. Bounded
 * (cleared when full, like ../state/compact.ts), short values only, and never a card number or CVV
 * (a PAN stays only in its request).
 */
const decodedValues = new Map<string, string>()
const DECODED_MAX = 4096
const DECODED_LENGTH_MAX = 128
const NOT_KEPT = /card.?n(?:umber|o)|cvv/i

/** {@link formDecode} of a value, through {@link decodedValues} when the field's values may be kept. */
function decodeValue(text: string, from: number, to: number, name: string): string {
  if (to - from > DECODED_LENGTH_MAX || NOT_KEPT.test(name)) return formDecode(text, from, to)
  const escaped = text.slice(from, to)
  const known = decodedValues.get(escaped)
  if (known !== undefined) return known
  // Throws URIError for a malformed escape (the caller falls back to URLSearchParams): nothing kept.
  const value = own(formDecode(text, from, to))
  if (decodedValues.size >= DECODED_MAX) decodedValues.clear()
  // The key as a flat copy too: a slice would keep the whole request body alive.
  decodedValues.set(own(escaped), value)
  return value
}

/** @internal Whether a decoded value is kept ({@link decodedValues}); for tests. */
export function isDecodedValueKept(value: string): boolean {
  for (const kept of decodedValues.values()) if (kept === value) return true
  return false
}

/** The value of a hex digit's character code, or -1. */
function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  const lower = c | 32
  return lower >= 97 && lower <= 102 ? lower - 87 : -1
}

/**
 * One name or value of a form, `text[from, to)`, which holds a `+` or `%` (the caller slices the
 * others as they are): `+` is a space, then percent-decoding. An escape of an ASCII byte (most of
 * them: `%40`, `%2F`, `%2B`) is decoded here; a part with an escape of any other byte goes whole to
 * `decodeURIComponent` (UTF-8 sequences), which throws URIError for a malformed one.
 */
function formDecode(text: string, from: number, to: number): string {
  let out = ""
  let run = from
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i)
    if (c === 43) {
      out += text.slice(run, i) + " "
      run = i + 1
    } else if (c === 37) {
      const high = i + 2 < to ? hexDigit(text.charCodeAt(i + 1)) : -1
      const low = high < 0 ? -1 : hexDigit(text.charCodeAt(i + 2))
      if (low < 0 || high > 7) return decodeURIComponent(text.slice(from, to).replaceAll("+", " "))
      out += text.slice(run, i) + String.fromCharCode(high * 16 + low)
      i += 2
      run = i + 1
    }
  }
  return run < to ? out + text.slice(run, to) : out
}

/**
 * The fields of a form body, exactly as `URLSearchParams` reads them (WHATWG
 * application/x-www-form-urlencoded parsing; proved equal on random bodies by
 * test/form-parse.test.ts), without its iterator and pair arrays. A name or value without `+` or
 * `%` is sliced as it is; where the next of each is, is kept across the body (one search each
 * for the whole body, not per part). A body with a percent sequence `decodeURIComponent` refuses
 * (a lone `%`, bytes that are not UTF-8) is parsed by `URLSearchParams` itself, which keeps or
 * replaces those.
 */
export function parseFields(text: string): Fields {
  const fields: Record<string, string> = Object.create(null)
  try {
    // URLSearchParams drops one leading "?".
    let at = text.charCodeAt(0) === 63 ? 1 : 0
    const end = text.length
    let plus = text.indexOf("+", at)
    let percent = text.indexOf("%", at)
    if (plus < 0) plus = end
    if (percent < 0) percent = end
    while (at <= end) {
      let amp = text.indexOf("&", at)
      if (amp < 0) amp = end
      if (amp > at) {
        let eq = text.indexOf("=", at)
        if (eq < 0 || eq > amp) eq = amp
        if (plus < at) plus = next(text, "+", at)
        if (percent < at) percent = next(text, "%", at)
        const escaped = plus < amp || percent < amp
        let name: string
        if (escaped && (plus < eq || percent < eq)) {
          const cut = formDecode(text, at, eq)
          name = FIELD_NAMES.get(cut) ?? cut
        } else {
          name = knownName(text, at, eq) ?? text.slice(at, eq)
        }
        if (name in fields) throw duplicate(name)
        // An escaped name may leave the value plain: decoding a plain value is only slower.
        fields[name] = eq >= amp ? "" : escaped ? decodeValue(text, eq + 1, amp, name) : text.slice(eq + 1, amp)
      }
      at = amp + 1
    }
    return fields
  } catch (error) {
    if (error instanceof URIError) return parseForm(text).fields
    throw error
  }
}

/** The index of the next `char` from `at`, or the text's length when there is none. */
function next(text: string, char: string, at: number): number {
  const found = text.indexOf(char, at)
  return found < 0 ? text.length : found
}

type Decoder = (input: unknown) => Either.Either<unknown, ParseResult.ParseError>

const DECODE_OPTIONS = { errors: "all", onExcessProperty: "ignore" } as const

/**
 * What a request Schema asks of one field, flattened: the request Schemas are structs of strings
 * under refinements (Schema's minLength, maxLength, pattern, and possibly other filters) and unions
 * of literals. For exactly those shapes the quick check tests the same predicates the decoder's
 * filters test, without its issue bookkeeping (a third of a request's CPU) and without a closure
 * per filter. Anything else (transformations, nested structs) gets no rule: the decoder decides.
 */
interface FieldRule {
  readonly name: string
  readonly optional: boolean
  /** A union of literals: the value must be one of them (and nothing else is asked). */
  readonly literals: ReadonlySet<unknown> | undefined
  min: number
  max: number
  readonly patterns: RegExp[]
  /** Filters other than Schema's own string filters, innermost first: called as the decoder calls them. */
  readonly others: SchemaAST.Refinement[]
}

type Rule = Omit<FieldRule, "name" | "optional">

function ruleOf(ast: SchemaAST.AST): Rule | undefined {
  switch (ast._tag) {
    case "StringKeyword":
      return { literals: undefined, min: 0, max: Number.POSITIVE_INFINITY, patterns: [], others: [] }
    case "Refinement": {
      const rule = ruleOf(ast.from)
      if (rule === undefined || rule.literals !== undefined) return undefined
      addFilter(rule, ast)
      return rule
    }
    case "Union": {
      const literals = new Set<unknown>()
      for (const member of ast.types) {
        if (member._tag !== "Literal") return undefined
        literals.add(member.literal)
      }
      return { literals, min: 0, max: Number.POSITIVE_INFINITY, patterns: [], others: [] }
    }
    default:
      return undefined
  }
}

/**
 * Adds one refinement of a string to its rule. Schema's own `minLength`, `maxLength` and `pattern`
 * are tested directly, as the contracts read them back (`stringFilterRule`); any other filter is
 * kept to be called as it is.
 */
function addFilter(rule: Rule, ast: SchemaAST.Refinement): void {
  const read = stringFilterRule(ast)
  if (read === undefined) rule.others.push(ast)
  else if ("min" in read) rule.min = Math.max(rule.min, read.min)
  else if ("max" in read) rule.max = Math.min(rule.max, read.max)
  else rule.patterns.push(read.regex)
}

/** Whether a present value passes its field's rule. */
function passes(rule: FieldRule, value: unknown): boolean {
  if (rule.literals !== undefined) return rule.literals.has(value)
  if (typeof value !== "string" || value.length < rule.min || value.length > rule.max) return false
  for (const regex of rule.patterns) {
    // As Schema.pattern does: a `g` regex must not carry its lastIndex between values.
    regex.lastIndex = 0
    if (!regex.test(value)) return false
  }
  for (const filter of rule.others) if (Option.isSome(filter.filter(value, DECODE_OPTIONS, filter))) return false
  return true
}

/** A check of a whole body (a struct of strings), or undefined when the Schema is not of that shape. */
function structCheckOf(ast: SchemaAST.AST): ((fields: Fields) => boolean) | undefined {
  if (ast._tag === "Refinement") {
    // A struct under a cross-field rule (spec: dependentRequired, oneOf…): the struct's check, then
    // the rule's own filter, as the decoder runs them.
    const inner = structCheckOf(ast.from)
    if (inner === undefined) return undefined
    return (fields) => inner(fields) && Option.isNone(ast.filter(fields, DECODE_OPTIONS, ast))
  }
  if (ast._tag !== "TypeLiteral" || ast.indexSignatures.length > 0) return undefined
  const rules: FieldRule[] = []
  for (const ps of ast.propertySignatures) {
    const rule = ruleOf(ps.type)
    if (typeof ps.name !== "string" || rule === undefined) return undefined
    rules.push({ ...rule, name: ps.name, optional: ps.isOptional })
  }
  return (fields) => {
    for (const rule of rules) {
      const value = fields[rule.name]
      if (value === undefined ? !rule.optional : !passes(rule, value)) return false
    }
    return true
  }
}

// Built once per operation at module load: decoding must not compile anything per request.
const decoders = new Map<OperationId, Decoder>()
const quickChecks = new Map<OperationId, (fields: Fields) => boolean>()
for (const [id, entry] of Object.entries(operationSchemas)) {
  const schema = entry.request as Schema.Schema<unknown, unknown, never>
  decoders.set(id as OperationId, Schema.decodeUnknownEither(schema, DECODE_OPTIONS))
  const quick = structCheckOf(schema.ast)
  if (quick !== undefined) quickChecks.set(id as OperationId, quick)
}

/** @internal Whether the quick check accepts `fields` (undefined: the operation has none); for tests. */
export function quickCheck(operationId: OperationId, fields: Fields): boolean | undefined {
  return quickChecks.get(operationId)?.(fields)
}

/**
 * Decodes the body by the operation's request Schema; failures list every field as `name: rule`.
 * A body the quick check accepts is one the decoder accepts (same filters); any other body goes
 * through the decoder, which then names every failing field.
 */
export function decodeRequest(operationId: OperationId, fields: Fields): void {
  if (quickChecks.get(operationId)?.(fields) === true) return
  const result = decoders.get(operationId)!(fields)
  if (Either.isRight(result)) return
  const clientOrderId = fields["client_orderid"] ?? fields["client-order-id"] ?? fields["client-orderid"]
  // A cross-field rule (spec: dependentRequired, oneOf…) runs only once every field decoded; when it
  // is what failed, the reply carries the rule's own error-code (currency-mismatch, payout-destination).
  const issue = result.left.issue
  const rules = crossFieldRules[operations[operationId].request]
  if (rules !== undefined && issue._tag === "Refinement" && issue.kind === "Predicate") {
    const broken = crossFieldIssues(rules, fields)
    if (broken.length > 0) throw new SimError(rules.errorCode as SimError["code"], broken.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "), clientOrderId)
  }
  throw new SimError("invalid-field", formatParseError(result.left), fields["client_orderid"])
}

/** `amount: Expected …; email: is missing`. */
function formatParseError(error: ParseResult.ParseError): string {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.map(String).join(".") : "body"}: ${issue.message}`)
    .join("; ")
}

/** Refuses a card number failing Luhn with invalid-card-number (the value itself is never shown). */
export function checkCardNumbers(fields: Fields): void {
  for (const name of CARD_NUMBER_FIELDS) {
    const pan = fields[name]
    if (pan !== undefined && !luhnValid(pan)) {
      throw new SimError("invalid-card-number", `${name}: fails the Luhn check (value not shown)`, fields["client_orderid"])
    }
  }
}
