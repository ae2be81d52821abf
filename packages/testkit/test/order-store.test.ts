/**
 * The order store's index by orderid: keyed by the orderid's number while every orderid is a
 * number's text, by the text once another comes (a restored snapshot's). Whatever the ids, it must
 * answer as one map by orderid text does: the same order for every id, the same size, the same
 * oldest-first order.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { OrderStore, orderidNumber, type Order } from "../src/state/orders"

function order(orderid: string, n: number): Order {
  return { orderid, login: n % 3 === 0 ? "other" : "merchant", clientOrderId: `c-${orderid}` } as Order
}

/** Ids a store may meet: its own, and the texts that look like numbers but are not a number's text. */
const orderid = fc.oneof(
  fc.integer({ min: 1_000_001, max: 1_000_040 }).map(String),
  fc.integer({ min: 0, max: 40 }).map(String),
  fc.constantFrom("007", "0", "00", "1e3", "+5", "-1", " 12", "12 ", "", "abc", "9007199254740993", "1000000000000000", "999999999999999", "1000001.0", "0x10"),
  fc.stringMatching(/^[0-9]{1,17}$/)
)

type Op = { readonly kind: "add" | "get" | "delete"; readonly id: string }
const op: fc.Arbitrary<Op> = fc.record({ kind: fc.constantFrom("add" as const, "add" as const, "get" as const, "delete" as const), id: orderid })

describe("order store index by orderid", () => {
  it("answers as a map by orderid text, through any mix of orderids", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const store = new OrderStore()
        const model = new Map<string, Order>()
        ops.forEach(({ kind, id }, i) => {
          if (kind === "add") {
            const o = order(id, i)
            store.add(o)
            model.set(id, o)
          } else if (kind === "delete") {
            const o = model.get(id)
            if (o !== undefined) {
              store.delete(o)
              model.delete(id)
            }
            // Deleting an order the store no longer holds under its id changes nothing.
            store.delete(order(id, i))
          }
          expect(store.get(id)).toBe(model.get(id))
          expect(store.size).toBe(model.size)
        })
        expect(store.all()).toEqual([...model.values()])
        for (const [id, o] of model) {
          expect(store.get(id)).toBe(o)
          expect(store.byClientOrderId(o.login, o.clientOrderId)).toBe(o)
          expect(store.findClientOrderId(o.clientOrderId)).toBe(o)
        }
      }),
      { numRuns: 1500 }
    )
  })

  it("reads an orderid's number only from its plain decimal text", () => {
    expect(orderidNumber("1000001")).toBe(1_000_001)
    expect(orderidNumber("0")).toBe(0)
    expect(orderidNumber("999999999999999")).toBe(999_999_999_999_999)
    for (const text of ["", "007", "00", "1e3", "+5", "-1", " 12", "12 ", "1000000000000000", "1.5", "abc", "١٢"]) expect([text, orderidNumber(text)]).toEqual([text, -1])
    fc.assert(fc.property(fc.string({ maxLength: 18 }), (text) => {
      const n = orderidNumber(text)
      expect(n < 0 || String(n) === text).toBe(true)
    }), { numRuns: 3000 })
    fc.assert(fc.property(fc.integer({ min: 0, max: 999_999_999_999_999 }), (n) => {
      expect(orderidNumber(String(n))).toBe(n)
    }))
  })

  it("keeps the oldest-first order when a restored orderid that is not a number's text comes after numeric ones", () => {
    const store = new OrderStore()
    const ids = ["1000001", "1000002", "legacy-7", "1000003", "0042", "5"]
    ids.forEach((id, i) => store.add(order(id, i)))
    expect(store.all().map((o) => o.orderid)).toEqual(ids)
    expect(store.get("42")).toBeUndefined()
    expect(store.get("0042")?.orderid).toBe("0042")
    store.clear()
    expect(store.size).toBe(0)
    store.add(order("1000009", 1))
    expect(store.get("1000009")?.orderid).toBe("1000009")
  })
})
