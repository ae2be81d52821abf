/**
 * The generated `src/generated/operations.ts`: the operation table, the control codes, the error
 * codes and the operation facts (transaction types, opening types, creating and declinable
 * operations), from the rows the generator collected from the spec.
 */
import type { OperationRow } from "./generator"
import { HEADER, SpecError, type Json } from "./spec-error"

export const collectTransactionTypes = (spec: Json): Array<{ name: string; text: string }> => {
  const types: Array<Json> = spec.info?.["x-paykit-transaction-types"] ?? []
  if (types.length === 0) throw new SpecError("info.x-paykit-transaction-types is missing")
  const seen = new Set<string>()
  return types.map((t) => {
    const name = String(t.name)
    if (!/^[a-z][a-z-]*$/.test(name)) throw new SpecError(`transaction type ${name}: must be lower-case words joined by -`)
    if (seen.has(name)) throw new SpecError(`transaction type ${name} is listed twice`)
    seen.add(name)
    return { name, text: String(t.text ?? "") }
  })
}

const ERROR_CATEGORIES = new Set(["validation", "auth", "lifecycle", "server"])

export const collectErrorCodes = (spec: Json): Array<{ code: string; category: string; text: string }> => {
  const codes: Array<Json> = spec.info?.["x-paykit-error-codes"]?.codes ?? []
  if (codes.length === 0) throw new SpecError("info.x-paykit-error-codes.codes is missing")
  const listed = codes.map((c) => String(c.code))
  const enumerated: Array<string> = spec.components?.schemas?.ErrorCode?.enum ?? []
  if (JSON.stringify(listed) !== JSON.stringify(enumerated)) {
    throw new SpecError("components.schemas.ErrorCode.enum differs from info.x-paykit-error-codes (run pnpm spec:refresh)")
  }
  const seen = new Set<string>()
  return codes.map((c) => {
    if (seen.has(c.code)) throw new SpecError(`error code ${c.code} is listed twice`)
    if (!ERROR_CATEGORIES.has(c.category)) throw new SpecError(`error code ${c.code}: unknown category ${c.category}`)
    seen.add(c.code)
    return { code: String(c.code), category: String(c.category), text: String(c.text) }
  })
}

export const generateOperations = (rows: Array<OperationRow>, errors: Array<{ code: string; category: string; text: string }>, types: Array<{ name: string; text: string }>): string => {
  const opening = types.map((t) => t.name).filter((name) => rows.some((r) => r.creates.includes(name)))
  const entries = rows.map((r) => `  ${r.operationId}: ${JSON.stringify(r)}`)
  const controlCodes: Record<string, { fields: Array<string>; operations: Array<string> }> = {}
  for (const r of rows) {
    if (r.auth.scheme !== "control") continue
    const c = (controlCodes[r.auth.code] ??= { fields: r.auth.fields, operations: [] })
    c.operations.push(r.operationId)
  }
  const sortedCodes = Object.fromEntries(Object.entries(controlCodes).sort(([a], [b]) => a.localeCompare(b)))
  return `${HEADER}import type { ControlCode, OperationSpec } from "../operation-types"

/** Every operation of the spec, keyed by operationId: path, auth, schemas and retry class. */
export const operations = {
${entries.join(",\n")}
} as const satisfies Record<string, OperationSpec>

/** An operation name of the interface, e.g. \`SALE\`. */
export type OperationId = keyof typeof operations

/** The operation ids in spec order. */
export const operationIds = ${JSON.stringify(rows.map((r) => r.operationId))} as const satisfies ReadonlyArray<OperationId>

/** Control codes with their digest fields and the operations that use them, derived from the table. */
export const controlCodes = ${JSON.stringify(sortedCodes)} as const satisfies Record<ControlCode, { fields: ReadonlyArray<string>; operations: ReadonlyArray<OperationId> }>

/** How a client treats an error-code: bad input, failed authentication, a lifecycle rule, or a gateway failure. */
export type ErrorCategory = "validation" | "auth" | "lifecycle" | "server"

/** Every error-code of 400 and 500 replies, with its category and meaning (spec: info.x-paykit-error-codes). */
export const errorCodes = {
${errors.map((e) => `  ${JSON.stringify(e.code)}: { category: ${JSON.stringify(e.category)}, text: ${JSON.stringify(e.text)} }`).join(",\n")}
} as const satisfies Record<string, { category: ErrorCategory; text: string }>

/** A PayKit error-code. */
export type ErrorCode = keyof typeof errorCodes

/** The known transaction types, as \`status\` and callbacks name them (spec: info.x-paykit-transaction-types). */
export const transactionTypes = {
${types.map((t) => `  ${JSON.stringify(t.name)}: ${JSON.stringify(t.text)}`).join(",\n")}
} as const

/** A known transaction type. */
export type KnownTransactionType = keyof typeof transactionTypes

/** A transaction type: a known one, or any other word a gateway adds. */
export type TransactionType = KnownTransactionType | (string & {})

/** The transaction types that open an order: those some operation creates (\`x-paykit-creates\`). */
export const openingTransactionTypes = ${JSON.stringify(opening)} as const satisfies ReadonlyArray<KnownTransactionType>

/** The operations that create an order, derived from the table. */
export const creatingOperationIds = ${JSON.stringify(rows.filter((r) => r.creates.length > 0).map((r) => r.operationId))} as const satisfies ReadonlyArray<OperationId>

/** The operations the simulator's decline-next fault can decide (\`x-paykit-declinable\`), derived from the table. */
export const declinableOperationIds = ${JSON.stringify(rows.filter((r) => r.declinable).map((r) => r.operationId))} as const satisfies ReadonlyArray<OperationId>
`
}
