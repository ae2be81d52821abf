/**
 * The operation facts come from the spec (`x-paykit-creates`, `x-paykit-declinable`,
 * `info.x-paykit-transaction-types`): each operation's are checked by name, a forgotten one is a
 * generator error naming the operation, and a new operation needs nothing beyond the spec here.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { parse } from "yaml"
import { creatingOperationIds, declinableOperationIds, openingTransactionTypes, operationIds, operations, transactionTypes } from "../src/index"
import { operationTableOf, specPath, type Json } from "../scripts/generator"

const spec = (): Json => parse(readFileSync(specPath, "utf8")) as Json
const postOf = (doc: Json, id: string): Json => {
  for (const item of Object.values<Json>(doc.paths)) if (item.post?.operationId === id) return item.post
  throw new Error(`no operation ${id}`)
}

describe("operation facts", () => {
  it.each(operationIds.map((id) => [id]))("%s: creates known transaction types, and is declinable only if it creates an order", (id) => {
    const row = operations[id]
    for (const type of row.creates) expect(Object.keys(transactionTypes)).toContain(type)
    if (row.declinable) expect(row.creates.length).toBeGreaterThan(0)
    expect(creatingOperationIds.includes(id as never)).toBe(row.creates.length > 0)
    expect(declinableOperationIds.includes(id as never)).toBe(row.declinable)
  })

  it("the opening transaction types are exactly those some operation creates", () => {
    const created = new Set(operationIds.flatMap((id) => [...operations[id].creates]))
    expect(new Set(openingTransactionTypes)).toEqual(created)
  })

  it("a forgotten or unknown fact is an error naming the operation", () => {
    const forgotten = spec()
    delete postOf(forgotten, "SALE")["x-paykit-creates"]
    expect(() => operationTableOf(forgotten)).toThrow(/SALE.*x-paykit-creates is missing/)
    const undecided = spec()
    delete postOf(undecided, "CAPTURE")["x-paykit-declinable"]
    expect(() => operationTableOf(undecided)).toThrow(/CAPTURE.*x-paykit-declinable/)
    const unknown = spec()
    postOf(unknown, "PAYOUT")["x-paykit-creates"] = ["gift"]
    expect(() => operationTableOf(unknown)).toThrow(/PAYOUT.*gift, not in info.x-paykit-transaction-types/)
  })

  it("a made-up read operation in a fixture of the spec enters the table from the spec alone", () => {
    const doc = spec()
    const status = postOf(doc, "STATUS")
    doc.paths["/api/v2/made-up-read/{endpointId}"] = {
      post: { ...status, operationId: "MADE_UP_READ", "x-paykit-method": "madeUpRead", "x-paykit-creates": [], "x-paykit-declinable": false }
    }
    const { rows } = operationTableOf(doc)
    expect(rows).toHaveLength(operationIds.length + 1)
    expect(rows.find((r) => r.operationId === "MADE_UP_READ")).toMatchObject({ path: "/api/v2/made-up-read/{endpointId}", retry: "read", creates: [], declinable: false })
  })
})
