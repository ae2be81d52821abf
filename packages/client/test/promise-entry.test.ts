/**
 * `@paykit/client/promise` (`src/promise-entry.ts`): the Promise facade's own entry. Its client is
 * `createPayClient`'s from the main entry, built on the first call: the same replies, the same
 * typed errors (the very classes), the key parsed at creation, and once built, the members are the
 * facade's own. What its import leaves out is checked in `cold-import.test.ts`.
 */
import { KeyFormatError } from "@paykit/signing"
import { describe, expect, it, vi } from "vitest"
import * as main from "../src/index"
import * as promiseEntry from "../src/promise-entry"
import { merchant, saleInput } from "./support/fixtures"
import { asyncOk, statusOk, stubFetch } from "./support/stub"

// A fresh copy of the entry, whose facade has not loaded yet (another test's first call loads it).
const freshEntry = async (): Promise<typeof promiseEntry> => {
  vi.resetModules()
  return import("../src/promise-entry")
}

const client = async (scripts: Parameters<typeof stubFetch>[0]) => {
  const { fetch, sent } = stubFetch(scripts)
  return { pay: (await freshEntry()).createPayClient({ baseUrl: "http://gateway.test", ...merchant, fetch }), sent }
}

const thrown = (f: () => unknown): unknown => {
  try {
    f()
  } catch (e) {
    return e
  }
  return undefined
}

describe("@paykit/client/promise", () => {
  it("exports the main entry's error classes and predicates themselves", () => {
    for (const name of ["InputError", "OutcomeUnknown", "GatewayValidationError", "CallbackSignatureError", "isPayClientError", "isTransient", "isOutcomeUnknown"] as const) {
      expect(promiseEntry[name]).toBe(main[name])
    }
  })

  it("answers a sale and a status as the main entry's client does, then its members are the facade's own", async () => {
    const { pay, sent } = await client([asyncOk(), statusOk("approved")])
    const lazySale = pay.sale
    const ack = await lazySale(saleInput())
    expect(ack.status).toBe("processing")
    expect(typeof ack.idempotencyKey).toBe("string")
    expect(pay.sale).not.toBe(lazySale)
    expect((await pay.status({ client_orderid: "c-1" })).status).toBe("approved")
    expect(sent.map((s) => new URL(s.url).pathname)).toEqual(["/api/v2/sale/1001", "/api/v2/status/1001"])
  })

  it("rejects bad input with the typed InputError naming the field, and sends nothing", async () => {
    const { pay, sent } = await client([])
    const { email: _, ...noEmail } = saleInput()
    const error = await pay.sale(noEmail as never).then(() => undefined, (e: unknown) => e)
    expect(error).toMatchObject({ _tag: "InputError", operation: "sale", field: "email" })
    expect(sent).toHaveLength(0)
  })

  it("throws a bad private key at creation, before its facade has loaded, as the main entry does", async () => {
    const options = { baseUrl: "http://gateway.test", ...merchant, privateKeyPem: "not a key" }
    expect(() => main.createPayClient(options)).toThrow(KeyFormatError)
    const fresh = await freshEntry()
    // the fresh copy's signing package is a fresh copy too: compare by name
    expect(thrown(() => fresh.createPayClient(options))).toMatchObject({ _tag: "KeyFormatError" })
  })
})
