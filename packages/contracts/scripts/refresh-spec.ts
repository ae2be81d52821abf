/**
 * `pnpm --filter @paykit/contracts spec:refresh`: the mechanical part of `spec/openapi.yaml`, so
 * operations and error codes added by hand get it too. Idempotent; it edits the YAML document in
 * place (comments and layout kept) and only adds what is missing:
 * - `components.schemas.ErrorCode.enum` = the codes of `info.x-paykit-error-codes`, in table order;
 * - on every operation: `x-paykit-accept` and a `description` written from the operation's own
 *   extensions (auth, retry class, request and reply schemas, client method).
 * - every request and reply schema's `examples`, from `spec/examples/simulator.json` (written by
 *   `pnpm --filter @paykit/testkit spec:examples` from the simulator's real traffic); these are
 *   replaced on every run, so they follow the simulator.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { isMap, parseDocument, type Document, type YAMLMap } from "yaml"
import { PAY_JSON, specPath } from "./generator"

/** Written by `pnpm --filter @paykit/testkit spec:examples` from the simulator's real traffic. */
export const examplesPath = fileURLToPath(new URL("../../../spec/examples/simulator.json", import.meta.url))

/** The most examples a schema gets: the first is what mocks answer, the rest show variants. */
const MAX_EXAMPLES = 3

type Json = Record<string, any>

const authText = (auth: Json): string => {
  if (auth.scheme === "control") {
    const fields = (auth.fields as Array<string>).map((f) => `\`${f}\``).join(" + ")
    return `Signed by \`control\` ${auth.code}: SHA-1 of ${fields} and the merchant control key${(auth.fields as Array<string>).includes("amount") ? ", the amount in cents (decision 2)" : ""}.`
  }
  return auth.scheme === "oauth-hmac-sha1"
    ? "Signed by an OAuth 1.0a `Authorization` header, HMAC-SHA1 with the merchant control key; no `control` field."
    : "Signed by an OAuth 1.0a `Authorization` header, RSA-SHA256 with the merchant's private key; no `control` field."
}

const retryText = (retry: string): string =>
  retry === "read"
    ? "It changes nothing: resending is safe."
    : "After an unknown outcome, ask `status` by the merchant order id before any resend."

const refTail = (ref: unknown): string => String(ref ?? "").split("/").pop() ?? ""

/** The description an operation gets when it has none. */
export const describeOperation = (op: Json): string => {
  const request = refTail(op.requestBody?.content?.["application/x-www-form-urlencoded"]?.schema?.$ref)
  const reply = refTail(op.responses?.["200"]?.content?.[PAY_JSON]?.schema?.$ref)
  return [
    `Send the fields of ${request} as \`application/x-www-form-urlencoded\` with the header \`Accept: ${PAY_JSON}\` (x-paykit-accept; any other Accept is a 400 \`not-acceptable\`). ${authText(op["x-paykit-auth"] ?? {})}`,
    `A 200 carries ${reply}; a refusal is a 400 ValidationErrorResponse whose \`error-code\` names the rule. ${retryText(op["x-paykit-retry"])}`,
    `PayKit client method: \`${op["x-paykit-method"]}\`.`
  ].join("\n")
}

const insertAfter = (doc: Document, map: YAMLMap, after: string, key: string, value: unknown): void => {
  const index = map.items.findIndex((pair) => String((pair.key as { value?: unknown })?.value ?? pair.key) === after)
  map.items.splice(index + 1, 0, doc.createPair(key, value))
}

interface Captured {
  readonly operations: Record<string, { request: Json; reply: Json }>
  readonly more: Record<string, { request: Json; reply: Json }>
  readonly notAcceptable?: { reply: Json }
  readonly validationError: { reply: Json }
  readonly serverError: { reply: Json }
  readonly callbacks: Array<Json>
}

/** Schema name → its examples, from the captured traffic; SALE and STATUS first (mocks answer the first). */
export const examplesBySchema = (spec: Json, captured: Captured): Map<string, Array<Json>> => {
  const out = new Map<string, Array<Json>>()
  const add = (schema: string, example: Json | undefined) => {
    if (!schema || example === undefined) return
    const list = out.get(schema) ?? []
    if (list.length < MAX_EXAMPLES && !list.some((e) => JSON.stringify(e) === JSON.stringify(example))) list.push(example)
    out.set(schema, list)
  }
  const schemasOf = new Map<string, { request: string; reply: string }>()
  for (const item of Object.values<Json>(spec.paths ?? {})) {
    for (const op of Object.values<Json>(item)) {
      schemasOf.set(op.operationId, {
        request: refTail(op.requestBody?.content?.["application/x-www-form-urlencoded"]?.schema?.$ref),
        reply: refTail(op.responses?.["200"]?.content?.[PAY_JSON]?.schema?.$ref)
      })
    }
  }
  const first = ["SALE", "STATUS"]
  const ids = [...first.filter((id) => id in captured.operations), ...Object.keys(captured.operations).filter((id) => !first.includes(id))]
  for (const id of ids) {
    const names = schemasOf.get(id)
    if (names === undefined) continue
    add(names.request, captured.operations[id]!.request)
    add(names.reply, captured.operations[id]!.reply)
  }
  for (const [label, x] of Object.entries(captured.more)) {
    const names = schemasOf.get(label.split(" ")[0]!)
    if (names !== undefined) add(names.reply, x.reply)
  }
  // First: a mock answers it to a request without the Accept header, as the gateway does.
  add("ValidationErrorResponse", captured.notAcceptable?.reply)
  add("ValidationErrorResponse", captured.validationError.reply)
  add("ServerErrorResponse", captured.serverError.reply)
  for (const c of captured.callbacks) add("ServerCallback", c)
  return out
}

/** Applies the refresh to the YAML text; returns the new text and what changed. */
export const refreshSpec = (text: string, captured?: Captured): { text: string; changes: Array<string> } => {
  const doc = parseDocument(text)
  const changes: Array<string> = []
  if (captured !== undefined) {
    for (const [name, examples] of examplesBySchema(doc.toJSON() as Json, captured)) {
      const schema = doc.getIn(["components", "schemas", name], false)
      if (!isMap(schema)) {
        changes.push(`${name}: no such schema (examples skipped)`)
        continue
      }
      const current = (schema.get("examples", false) as { toJSON(): unknown } | undefined)?.toJSON()
      if (JSON.stringify(current) === JSON.stringify(examples)) continue
      const node = doc.createNode(examples)
      // One line per example keeps the spec scannable and each re-run's diff small.
      for (const item of (node as unknown as { items: Array<{ flow?: boolean }> }).items) item.flow = true
      schema.set("examples", node)
      changes.push(`${name}: ${examples.length} example(s)`)
    }
  }
  const codes = ((doc.getIn(["info", "x-paykit-error-codes", "codes"], false) as YAMLMap | undefined)?.toJSON() ?? []) as Array<Json>
  const wanted = codes.map((c) => String(c.code))
  const current = (doc.getIn(["components", "schemas", "ErrorCode", "enum"], false) as { toJSON(): unknown } | undefined)?.toJSON()
  if (JSON.stringify(current) !== JSON.stringify(wanted)) {
    const node = doc.createNode(wanted, { flow: true })
    doc.setIn(["components", "schemas", "ErrorCode", "enum"], node)
    changes.push(`ErrorCode.enum: ${wanted.length} codes`)
  }
  const paths = doc.get("paths") as YAMLMap
  for (const item of paths.items) {
    const path = String((item.key as { value: unknown }).value)
    if (!isMap(item.value)) continue
    for (const verbPair of item.value.items) {
      const op = verbPair.value
      if (!isMap(op)) continue
      const json = op.toJSON() as Json
      if (json["x-paykit-accept"] === undefined) {
        insertAfter(doc, op, json["x-paykit-method"] === undefined ? "summary" : "x-paykit-method", "x-paykit-accept", PAY_JSON)
        changes.push(`${path}: x-paykit-accept`)
      }
      if (json.description === undefined) {
        const node = doc.createNode(describeOperation(json))
        insertAfter(doc, op, "summary", "description", node)
        changes.push(`${path}: description`)
      }
    }
  }
  return { text: doc.toString({ lineWidth: 0, flowCollectionPadding: false }), changes }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const before = readFileSync(specPath, "utf8")
  const captured = existsSync(examplesPath) ? (JSON.parse(readFileSync(examplesPath, "utf8")) as Captured) : undefined
  const { text, changes } = refreshSpec(before, captured)
  if (text !== before) writeFileSync(specPath, text)
  console.log(changes.length === 0 ? "spec/openapi.yaml: nothing to refresh" : `spec/openapi.yaml: ${changes.length} change(s)\n  ${changes.join("\n  ")}`)
}
