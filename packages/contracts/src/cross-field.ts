/**
 * Cross-field rules of request schemas, as the spec states them in JSON Schema
 * (`dependentRequired`, `oneOf`/`anyOf` of `required`, `not` of `required`). The generator turns a
 * schema's rules into data ({@link CrossFieldRules}) and an Effect `Schema.filter`; this module is
 * the one checker both use, so the client (before sending) and the simulator (on receipt) refuse
 * the same requests with the same message.
 *
 * @packageDocumentation
 */

/** One rule over which fields are present. */
export type CrossFieldRule =
  /** When `field` is present, every field of `requires` must be too (JSON Schema `dependentRequired`). */
  | { readonly kind: "dependentRequired"; readonly field: string; readonly requires: ReadonlyArray<string> }
  /** Exactly one (`oneOf`) or at least one (`anyOf`) alternative has all its fields present. */
  | { readonly kind: "oneOf" | "anyOf"; readonly alternatives: ReadonlyArray<ReadonlyArray<string>> }
  /** Not all of `fields` may be present at once (JSON Schema `not: {required: [...]}`). */
  | { readonly kind: "not"; readonly fields: ReadonlyArray<string> }

/** The rules of one request schema and the error-code a server answers when one is broken. */
export interface CrossFieldRules {
  /** `x-paykit-rule-error-code` of the schema, else `invalid-field`. */
  readonly errorCode: string
  /** The rules, in spec order. */
  readonly rules: ReadonlyArray<CrossFieldRule>
}

/** A broken rule: the field it names first and the rule in words. */
export interface CrossFieldIssue {
  /** The one field the message is about (a field to add or to drop). */
  readonly path: ReadonlyArray<string>
  /** The rule, e.g. `is required when amount is present`; never a value. */
  readonly message: string
}

const present = (value: Readonly<Record<string, unknown>>, field: string): boolean => value[field] !== undefined

/** Every rule of `rules` that `value` breaks; empty when it keeps them all. */
export function crossFieldIssues(rules: CrossFieldRules, value: Readonly<Record<string, unknown>>): Array<CrossFieldIssue> {
  const issues: Array<CrossFieldIssue> = []
  for (const rule of rules.rules) {
    switch (rule.kind) {
      case "dependentRequired": {
        if (!present(value, rule.field)) break
        for (const need of rule.requires) {
          if (!present(value, need)) issues.push({ path: [need], message: `is required when ${rule.field} is present (${rule.field} and ${need} travel together)` })
        }
        break
      }
      case "oneOf":
      case "anyOf": {
        const given = rule.alternatives.filter((alt) => alt.every((f) => present(value, f)))
        const met = given.length
        if (rule.kind === "anyOf" ? met >= 1 : met === 1) break
        const names = rule.alternatives.map((alt) => alt.join(" + ")).join(", ")
        const want = rule.kind === "oneOf" ? "exactly one" : "at least one"
        // Name what was given, so "two destinations" says which two.
        const got = met === 0 ? "got 0: none was given" : `got ${met}: ${given.map((alt) => alt.join(" + ")).join(" and ")}`
        issues.push({ path: [rule.alternatives[0]![0]!], message: `${want} of ${names} is required (${got})` })
        break
      }
      case "not": {
        if (rule.fields.every((f) => present(value, f))) issues.push({ path: [rule.fields[0]!], message: `must not be sent together with ${rule.fields.slice(1).join(", ")}` })
        break
      }
    }
  }
  return issues
}

/** A `Schema.filter` predicate for `rules`: `true`, or the issues (Effect reports each at its field). */
export const crossFieldFilter =
  (rules: CrossFieldRules) =>
  (value: Readonly<Record<string, unknown>>): true | ReadonlyArray<CrossFieldIssue> => {
    const issues = crossFieldIssues(rules, value)
    return issues.length === 0 ? true : issues
  }

/**
 * The field schemas of a request schema, whether it is a plain `Schema.Struct` or a Struct refined
 * by its cross-field rules (a filter keeps the Struct as `from`).
 */
export function structFields<F>(schema: unknown): F {
  const s = schema as { fields?: F; from?: unknown }
  if (s.fields !== undefined) return s.fields
  if (s.from !== undefined) return structFields<F>(s.from)
  throw new TypeError("not a Struct schema")
}
