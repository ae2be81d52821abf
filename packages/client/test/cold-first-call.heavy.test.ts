/**
 * A process's first calls, made before the client's engine has loaded (`lazy-engine.ts`): bad
 * input still ends in the typed `InputError` naming the field and the rule, through the public
 * entry (`@paykit/client`'s `index.ts`), for the Effect API (a method, `request()`, `status`) and
 * the Promise facade, and nothing is sent. The Effect API checks such input when its Effect runs,
 * so `Effect.runSync` of it cannot finish synchronously; once the engine has loaded, the same input
 * fails at once. Every other client test file loads the engine before its tests
 * (`support/warm-engine.ts`), so this one runs in a fresh process of its own: a heavy test.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { merchant, saleInput } from "./support/fixtures"

const entry = fileURLToPath(new URL("../src/index.ts", import.meta.url))
const effect = import.meta.resolve("effect/Effect")
const exit = import.meta.resolve("effect/Exit")

// The script builds every call before awaiting anything, so each is made while the engine's
// module has not loaded; it prints what each call ended in.
const script = `
  const { createPayClient, makePayClient, resolveConfig, InputError } = await import(${JSON.stringify(entry)})
  const Effect = await import(${JSON.stringify(effect)})
  const Exit = await import(${JSON.stringify(exit)})
  const sent = []
  const fetch = async (url) => { sent.push(String(url)); return new Response("{}", { status: 200 }) }
  const options = { baseUrl: "http://gateway.test", ...${JSON.stringify(merchant)}, fetch }
  const { email, ...noEmail } = ${JSON.stringify(saleInput())}
  const describe = (e) => ({ tag: e?._tag, typed: e instanceof InputError, operation: e?.operation, field: e?.field, rule: typeof e?.rule === "string" && e.rule.length > 0 })
  const service = makePayClient(resolveConfig(options))
  const promiseClient = createPayClient(options)
  // before the engine loads: an Effect cannot run to its end synchronously
  const sync = Effect.runSyncExit(service.sale(noEmail))
  const syncFinished = Exit.isExit(sync) && !(Exit.isFailure(sync) && String(sync.cause).includes("AsyncFiberException"))
  const sale = service.sale(noEmail)
  const request = service.request({ path: "/api/v2/sale/{endpointId}", auth: "control", kind: "read", controlFields: ["endpointId"], fields: { control: "0" } })
  const status = service.status({})
  const promised = promiseClient.sale(noEmail).then(() => undefined, describe)
  const results = {
    syncFinished,
    sale: describe(await Effect.runPromise(Effect.flip(sale))),
    request: describe(await Effect.runPromise(Effect.flip(request))),
    status: describe(await Effect.runPromise(Effect.flip(status))),
    promise: await promised
  }
  // loaded: the same input fails at once
  const after = Effect.runSyncExit(service.sale(noEmail))
  results.after = Exit.isFailure(after) && after.cause._tag === "Fail" ? describe(after.cause.error) : "not a failure"
  results.sent = sent.length
  console.log(JSON.stringify(results))
`

describe("a process's first calls, before the client's engine has loaded", () => {
  it("fail bad input with the typed InputError naming the field, for the Effect API and the Promise facade, and send nothing", () => {
    const run = spawnSync(process.execPath, ["--conditions=@paykit/source", "--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
      timeout: 120_000
    })
    expect(run.stderr).toBe("")
    const results = JSON.parse(run.stdout.trim())
    const missing = (operation: string, field: string) => ({ tag: "InputError", typed: true, operation, field, rule: true })
    expect(results.syncFinished).toBe(false)
    expect(results.sale).toEqual(missing("sale", "email"))
    expect(results.request).toEqual(missing(results.request.operation, "fields.control"))
    expect(results.status).toEqual({ ...missing("status", results.status.field), field: expect.stringMatching(/client_orderid|orderid/) })
    expect(results.promise).toEqual(missing("sale", "email"))
    expect(results.after).toEqual(missing("sale", "email"))
    expect(results.sent).toBe(0)
  }, 180_000)
})
