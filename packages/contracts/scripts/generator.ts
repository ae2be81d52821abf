/**
 * Generates `src/generated/` from `spec/openapi.yaml`: openapi-typescript wire types, Effect Schemas
 * and the operation table. Pure: it returns file contents, so the drift test can compare them with
 * what is committed without writing anything.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import openapiTS, { astToString } from "openapi-typescript"
import { parse } from "yaml"
import { collectErrorCodes, collectTransactionTypes, generateOperations } from "./operations-file"
import { HEADER, SpecError, type Json } from "./spec-error"

export const specPath = fileURLToPath(new URL("../../../spec/openapi.yaml", import.meta.url))
export const generatedDir = fileURLToPath(new URL("../src/generated/", import.meta.url))

export { HEADER, SpecError, type Json } from "./spec-error"

const refName = (ref: string): string => {
  const m = /^#\/components\/schemas\/(.+)$/.exec(ref)
  if (!m) throw new SpecError(`unsupported $ref ${ref}`)
  return m[1]!
}

const lit = (v: unknown): string => JSON.stringify(v)

/** An Effect Schema expression for one JSON Schema node; `deps` collects referenced names. */
const schemaExpr = (node: Json, where: string, deps: Set<string>): string => {
  if (node.$ref) {
    const name = refName(node.$ref)
    deps.add(name)
    return name
  }
  if (Array.isArray(node.allOf) && node.type !== "object") {
    if (node.allOf.length !== 1 || !node.allOf[0].$ref) throw new SpecError(`${where}: allOf must be a single $ref`)
    return schemaExpr(node.allOf[0], where, deps)
  }
  if (Array.isArray(node.anyOf) && node.type === undefined) {
    return `Schema.Union(${node.anyOf.map((alt: Json, i: number) => schemaExpr(alt, `${where}.anyOf[${i}]`, deps)).join(", ")})`
  }
  const types: Array<string> = Array.isArray(node.type) ? node.type : [node.type]
  if (types.length > 1) {
    return `Schema.Union(${types.map((t) => schemaExpr({ ...node, type: t }, where, deps)).join(", ")})`
  }
  switch (types[0]) {
    case "string": {
      if (node.enum) {
        if (node.enum.length === 0) throw new SpecError(`${where}: enum is empty (run pnpm spec:refresh)`)
        return `Schema.Literal(${node.enum.map(lit).join(", ")})`
      }
      const filters: Array<string> = []
      if (node.minLength !== undefined) filters.push(`Schema.minLength(${node.minLength})`)
      if (node.maxLength !== undefined) filters.push(`Schema.maxLength(${node.maxLength})`)
      if (node.pattern !== undefined) filters.push(`Schema.pattern(new RegExp(${lit(node.pattern)}))`)
      return filters.length ? `Schema.String.pipe(${filters.join(", ")})` : "Schema.String"
    }
    case "integer": {
      const filters: Array<string> = []
      if (node.minimum !== undefined) filters.push(`Schema.greaterThanOrEqualTo(${Number(node.minimum)})`)
      if (node.maximum !== undefined) filters.push(`Schema.lessThanOrEqualTo(${Number(node.maximum)})`)
      return filters.length ? `Schema.Int.pipe(${filters.join(", ")})` : "Schema.Int"
    }
    case "object": {
      const required = new Set<string>(node.required ?? [])
      const props = Object.entries<Json>(node.properties ?? {})
      for (const r of required) {
        if (!props.some(([k]) => k === r)) throw new SpecError(`${where}: required field ${r} has no property`)
      }
      const lines = props.map(([key, prop]) => {
        const inner = schemaExpr(prop, `${where}.${key}`, deps)
        const value = required.has(key) ? inner : `Schema.optionalWith(${inner}, { exact: true })`
        return `  ${lit(key)}: ${value}`
      })
      return `Schema.Struct({\n${lines.join(",\n")}\n})`
    }
    default:
      throw new SpecError(`${where}: unsupported type ${String(node.type)}`)
  }
}

const requiredOnly = (alt: Json, where: string): Array<string> => {
  const keys = Object.keys(alt)
  if (keys.length !== 1 || !Array.isArray(alt.required) || alt.required.length === 0) {
    throw new SpecError(`${where}: only {required: [...]} alternatives are supported`)
  }
  return alt.required.map(String)
}

/** The cross-field rules of an object schema (dependentRequired, oneOf/anyOf/not of required, allOf of those). */
export const crossFieldRulesOf = (node: Json, where: string): Array<Json> => {
  const rules: Array<Json> = []
  const props = new Set(Object.keys(node.properties ?? {}))
  const known = (f: string, w: string) => {
    if (!props.has(f)) throw new SpecError(`${w}: ${f} is not a property`)
    return f
  }
  const collect = (n: Json, w: string) => {
    for (const [field, requires] of Object.entries<Array<string>>(n.dependentRequired ?? {})) {
      rules.push({ kind: "dependentRequired", field: known(field, w), requires: requires.map((r) => known(r, w)) })
    }
    for (const kind of ["oneOf", "anyOf"] as const) {
      if (n[kind] === undefined) continue
      const alternatives = (n[kind] as Array<Json>).map((alt, i) => requiredOnly(alt, `${w}.${kind}[${i}]`).map((f) => known(f, w)))
      rules.push({ kind, alternatives })
    }
    if (n.not !== undefined) rules.push({ kind: "not", fields: requiredOnly(n.not, `${w}.not`).map((f) => known(f, w)) })
    ;(n.allOf ?? []).forEach((sub: Json, i: number) => {
      if (sub.$ref || sub.properties) throw new SpecError(`${w}.allOf[${i}]: an object's allOf holds only rules`)
      collect(sub, `${w}.allOf[${i}]`)
    })
  }
  collect(node, where)
  return rules
}

const annotations = (name: string, node: Json): string => {
  const a: Json = { identifier: name }
  if (node.description) a.documentation = String(node.description).trim()
  const json = JSON.stringify(a)
  if (node["x-paykit-sensitive"] !== true) return `.annotations(${json})`
  // Card data: Effect's default messages quote the actual value, which would put a PAN or CVV in an
  // error message; this one states the rule only, for every failure below it.
  const rule = node.pattern ? `a string matching ${node.pattern}` : "a valid value"
  const message = lit(`Expected ${rule} (value not shown)`)
  return `.annotations({ ...${json}, message: () => ({ message: ${message}, override: true }) })`
}

/** Orders schema names so that each comes after everything it references. */
const topoSort = (deps: Map<string, Set<string>>): Array<string> => {
  const out: Array<string> = []
  const state = new Map<string, "visiting" | "done">()
  const visit = (n: string, path: Array<string>) => {
    if (state.get(n) === "done") return
    if (state.get(n) === "visiting") throw new SpecError(`schema cycle: ${[...path, n].join(" -> ")}`)
    if (!deps.has(n)) throw new SpecError(`unknown schema ${n} referenced from ${path.at(-1)}`)
    state.set(n, "visiting")
    for (const d of [...deps.get(n)!].sort()) visit(d, [...path, n])
    state.set(n, "done")
    out.push(n)
  }
  for (const n of deps.keys()) visit(n, [])
  return out
}

const generateSchemas = (spec: Json): string => {
  const schemas: Json = spec.components?.schemas ?? {}
  const exprs = new Map<string, string>()
  const deps = new Map<string, Set<string>>()
  const ruleDecls = new Map<string, string>()
  for (const [name, node] of Object.entries<Json>(schemas)) {
    const d = new Set<string>()
    let expr = schemaExpr(node, `components.schemas.${name}`, d)
    const rules = node.type === "object" ? crossFieldRulesOf(node, `components.schemas.${name}`) : []
    if (rules.length > 0) {
      const errorCode = String(node["x-paykit-rule-error-code"] ?? "invalid-field")
      ruleDecls.set(name, `/** Cross-field rules of {@link ${name}} (JSON Schema keywords of the spec). */\nexport const ${name}Rules = ${JSON.stringify({ errorCode, rules })} as const satisfies CrossFieldRules`)
      expr = `${expr}.pipe(Schema.filter(crossFieldFilter(${name}Rules)))`
    }
    exprs.set(name, expr + annotations(name, node))
    deps.set(name, d)
  }
  const order = topoSort(deps)
  const body = order.map((name) => {
    const doc = schemas[name].description ? `/** ${String(schemas[name].description).trim().replace(/\*\//g, "*\\/")} */\n` : ""
    const rules = ruleDecls.has(name) ? `${ruleDecls.get(name)}\n\n` : ""
    return `${rules}${doc}export const ${name} = ${exprs.get(name)}\n/** Wire type of {@link ${name}}. */\nexport type ${name} = typeof ${name}.Type`
  })
  // An alias (allOf of one $ref) has the rules of what it names.
  const ruleOwner = (name: string): string | undefined => {
    const node = schemas[name]
    if (ruleDecls.has(name)) return name
    if (node?.type !== "object" && Array.isArray(node?.allOf) && node.allOf[0]?.$ref) return ruleOwner(refName(node.allOf[0].$ref))
    return undefined
  }
  const withRules = order.flatMap((n) => (ruleOwner(n) === undefined ? [] : [`  ${n}: ${ruleOwner(n)}Rules`]))
  const registry = `/** Every schema of the spec by its component name. */\nexport const schemas = {\n${order.map((n) => `  ${n}`).join(",\n")}\n} as const`
  const rulesRegistry = `/** The cross-field rules of every schema that has some, by component name. */\nexport const crossFieldRules: Readonly<Record<string, CrossFieldRules>> = {\n${withRules.join(",\n")}\n}`
  return `${HEADER}import * as Schema from "effect/Schema"\nimport { crossFieldFilter, type CrossFieldRules } from "../cross-field"\n\n${body.join("\n\n")}\n\n${registry}\n\n${rulesRegistry}\n`
}

export interface OperationRow {
  operationId: string
  method: string
  path: string
  family: string
  auth: Json
  request: string
  response: string
  retry: string
  accept: string
  summary: string
  creates: Array<string>
  declinable: boolean
}

/** The one media type of PayKit's replies; the request's Accept header must name it. */
export const PAY_JSON = "application/vnd.pay+json"

const CONTROL_CODES = new Set(["C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8"])

const collectOperations = (spec: Json, transactionTypes: ReadonlySet<string>): Array<OperationRow> => {
  const rows: Array<OperationRow> = []
  const codeFields = new Map<string, string>()
  for (const [path, item] of Object.entries<Json>(spec.paths ?? {})) {
    for (const [verb, op] of Object.entries<Json>(item)) {
      const where = `${verb.toUpperCase()} ${path}`
      if (verb !== "post") throw new SpecError(`${where}: only POST operations are expected`)
      const auth = op["x-paykit-auth"]
      if (!auth) throw new SpecError(`${where}: x-paykit-auth is missing`)
      const requestRef = op.requestBody?.content?.["application/x-www-form-urlencoded"]?.schema?.$ref
      const responseRef = op.responses?.["200"]?.content?.["application/vnd.pay+json"]?.schema?.$ref
      if (!requestRef) throw new SpecError(`${where}: form-urlencoded request schema $ref is missing`)
      if (!responseRef) throw new SpecError(`${where}: vnd.pay+json 200 schema $ref is missing`)
      const request = refName(requestRef)
      const fields = requestFields(spec, request)
      if (auth.scheme === "control") {
        if (!CONTROL_CODES.has(auth.code)) throw new SpecError(`${where}: unknown control code ${auth.code}`)
        if (!Array.isArray(auth.fields) || auth.fields.length === 0) throw new SpecError(`${where}: control fields missing`)
        const key = auth.fields.join(",")
        const seen = codeFields.get(auth.code)
        if (seen !== undefined && seen !== key) throw new SpecError(`${where}: ${auth.code} fields differ from another operation's`)
        codeFields.set(auth.code, key)
        for (const f of auth.fields) {
          if (f !== "endpointId" && !fields.has(f)) throw new SpecError(`${where}: control field ${f} is not in ${request}`)
        }
        if (!fields.has("control")) throw new SpecError(`${where}: ${request} has no control field`)
      } else if (auth.scheme === "oauth-hmac-sha1" || auth.scheme === "oauth-rsa-sha256") {
        if (fields.has("control")) throw new SpecError(`${where}: OAuth operation's ${request} must not carry control`)
        const want = auth.scheme === "oauth-hmac-sha1" ? "oauthHmacSha1" : "oauthRsaSha256"
        if (!(op.security ?? []).some((s: Json) => want in s)) throw new SpecError(`${where}: security must name ${want}`)
      } else {
        throw new SpecError(`${where}: unknown auth scheme ${auth.scheme}`)
      }
      const params: Array<Json> = op.parameters ?? []
      const refs = params.map((p) => p.$ref)
      if (!refs.includes("#/components/parameters/EndpointId") || !refs.includes("#/components/parameters/Accept")) {
        throw new SpecError(`${where}: EndpointId and Accept parameters are required`)
      }
      const family = /^\/api\/(3ds\/v1|v2|v4)\//.exec(path)?.[1]
      if (!family) throw new SpecError(`${where}: path is in no known version family`)
      if (!op["x-paykit-method"]) throw new SpecError(`${where}: x-paykit-method is missing`)
      if (!/^[a-z][A-Za-z0-9]*$/.test(op["x-paykit-method"])) throw new SpecError(`${where}: x-paykit-method must be a camelCase name`)
      if (!op.description) throw new SpecError(`${where}: description is missing (run pnpm spec:refresh)`)
      const accept = op["x-paykit-accept"]
      if (accept !== PAY_JSON) throw new SpecError(`${where}: x-paykit-accept must be ${PAY_JSON} (run pnpm spec:refresh)`)
      for (const [code, response] of Object.entries<Json>(op.responses ?? {})) {
        const content = response.$ref ? spec.components?.responses?.[String(response.$ref).split("/").pop()!]?.content : response.content
        if (content === undefined) continue
        const types = Object.keys(content)
        if (types.length !== 1 || types[0] !== accept) throw new SpecError(`${where}: response ${code} must be ${accept} only, as x-paykit-accept says`)
      }
      if (op["x-paykit-retry"] !== "read" && op["x-paykit-retry"] !== "reconcile") {
        throw new SpecError(`${where}: x-paykit-retry must be read or reconcile`)
      }
      const creates: unknown = op["x-paykit-creates"]
      if (!Array.isArray(creates)) throw new SpecError(`${where} (${op.operationId}): x-paykit-creates is missing (the transaction types of the order it creates; [] for none)`)
      for (const t of creates) {
        if (!transactionTypes.has(String(t))) throw new SpecError(`${where} (${op.operationId}): x-paykit-creates names ${String(t)}, not in info.x-paykit-transaction-types`)
      }
      if (typeof op["x-paykit-declinable"] !== "boolean") throw new SpecError(`${where} (${op.operationId}): x-paykit-declinable must be true or false`)
      if (op["x-paykit-declinable"] === true && creates.length === 0) throw new SpecError(`${where} (${op.operationId}): a declinable operation must create an order (x-paykit-creates)`)
      rows.push({
        operationId: op.operationId,
        method: op["x-paykit-method"],
        path,
        family,
        auth: auth.scheme === "control" ? { scheme: "control", code: auth.code, fields: auth.fields } : { scheme: auth.scheme },
        request,
        response: refName(responseRef),
        retry: op["x-paykit-retry"],
        accept,
        summary: String(op.summary ?? ""),
        creates: creates.map(String),
        declinable: op["x-paykit-declinable"]
      })
    }
  }
  return rows
}

/** Property names of a request schema, following a single-$ref allOf alias. */
const requestFields = (spec: Json, name: string): Set<string> => {
  const node: Json | undefined = spec.components?.schemas?.[name]
  if (!node) throw new SpecError(`unknown schema ${name}`)
  if (node.allOf && node.type !== "object") return requestFields(spec, refName(node.allOf[0].$ref))
  return new Set(Object.keys(node.properties ?? {}))
}

const generateOperationSchemas = (rows: Array<OperationRow>): string => {
  const names = [...new Set(rows.flatMap((r) => [r.request, r.response]))].sort()
  const entries = rows.map((r) => `  ${r.operationId}: { request: ${r.request}, response: ${r.response} }`)
  return `${HEADER}import { ${names.join(", ")} } from "./schemas"

/** The request and 200-response Schemas of every operation. */
export const operationSchemas = {
${entries.join(",\n")}
} as const
`
}

const generateWireTypes = async (): Promise<string> => {
  const ast = await openapiTS(pathToFileURL(specPath), { immutable: true, alphabetize: false })
  return HEADER + astToString(ast)
}

/**
 * The operation table's rows and the known transaction types of a parsed spec, each operation's
 * facts checked (a missing or unknown `x-paykit-*` fact is a SpecError naming the operation).
 */
export const operationTableOf = (spec: Json): { types: Array<{ name: string; text: string }>; rows: Array<OperationRow> } => {
  const types = collectTransactionTypes(spec)
  return { types, rows: collectOperations(spec, new Set(types.map((t) => t.name))) }
}

/** File name (inside `src/generated/`) → content. */
export const generateAll = async (): Promise<Record<string, string>> => {
  const spec = parse(readFileSync(specPath, "utf8")) as Json
  const { types, rows } = operationTableOf(spec)
  return {
    "openapi.ts": await generateWireTypes(),
    "schemas.ts": generateSchemas(spec),
    "operations.ts": generateOperations(rows, collectErrorCodes(spec), types),
    "operation-schemas.ts": generateOperationSchemas(rows)
  }
}
