import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { OperationInput, OperationResult, PayClientService, PromisePayClient } from "../src/index"

// Compile-time checks of the mapped method table (this file fails `typecheck` if they break).
declare const pay: PromisePayClient
declare const svc: PayClientService

async function typeChecks() {
  // @ts-expect-error orderid is required by capture
  await pay.capture({ client_orderid: "c" })
  // @ts-expect-error control is never an input
  await pay.status({ client_orderid: "c", control: "x" })
  const status = await pay.status({ client_orderid: "c" })
  const id: string = status["paynet-order-id"]
  const sale = await pay.sale({} as OperationInput<"SALE">)
  if (sale.type === "reconciled") sale.statusReply.status satisfies string
  else sale["serial-number"] satisfies string
  const eff = svc.getCardInfo({ cardrefid: "r" })
  const info: Effect.Effect<OperationResult<"CARDINFO">, { _tag: string }> = eff
  return [id, info]
}

describe("types", () => {
  it("method table exposes all 28 methods", () => {
    expect(typeof typeChecks).toBe("function")
  })
})
