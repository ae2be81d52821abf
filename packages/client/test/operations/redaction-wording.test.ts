/**
 * Attack suite: CVVs and PANs in gateway wording that simple patterns
 * miss (a qualifier word after the field name, a URL-encoded echo of the request
 * body, PAN groups split by dots, double spaces or no-break spaces), through `scrubText` and through
 * a gateway's 400 and 500 replies on a sale.
 */
import { beforeEach, describe, expect, it } from "vitest"
import { scrubText } from "../../src/index"
import { newSim, settled, client } from "../support/attacks"
import { startTestTime, useTestTime } from "../support/test-time"

// Every test here runs on the controlled clock (support/test-time.ts): its deadlines, leases and
// latencies race nothing but each other.
useTestTime()
beforeEach(startTestTime)

const PAN = "4111111111111111"
const grouped = (sep: string) => PAN.replace(/(\d{4})(?=\d)/g, `$1${sep}`)

const CVV_TEXTS = [
  "Invalid CVV code: 987",
  "CVV2 value 987 rejected",
  "CVC number 987",
  "cvv_code=987",
  "card security code no. 987",
  "credit_card_number=411111******1111&cvv2%3D987&x=1",
  "cvv2%3A%20987",
  "cvv2+%3D+987",
  "cvv2+is+987"
]
const PAN_TEXTS = [grouped("."), grouped("  "), grouped("\u00a0"), `card ${grouped(". ")} declined`]

describe("attack: redaction of CVVs and PANs in other wording", () => {
  it("scrubText masks a CVV after a qualifier word or URL-encoded separators", () => {
    for (const t of CVV_TEXTS) expect(scrubText(t), t).not.toContain("987")
  })

  it("scrubText masks PAN groups split by dots, double spaces or no-break spaces", () => {
    for (const t of PAN_TEXTS) expect(scrubText(t).replace(/[^0-9*]/g, ""), JSON.stringify(t)).not.toContain(PAN)
  })

  it("a serial number (one UUID) stays as it is; beside a CVV or a PAN, they are still masked", () => {
    const serial = "309db658-4905-4518-9478-75f65df46ef1"
    expect(scrubText(serial)).toBe(serial)
    expect(scrubText(`${serial} cvv2=987`)).toBe(`${serial} cvv2=***`)
    expect(scrubText(`${serial} ${grouped(".")}`)).not.toContain(grouped("."))
  })

  it("not over-eager: amounts, dates, order ids and short codes stay as they were", () => {
    for (const t of ["amount 10.00 order 1000001 code 987", "at 2026-11-26 02:45:54 order 12345", "ip 10.0.0.1 amount 1234.56", "error code 300 for cvv field"]) expect(scrubText(t)).toBe(t)
  })

  it("a gateway's 400 and 500 texts echoing them on a status read reach no error message", async () => {
    const sim = newSim()
    try {
      const texts = [...CVV_TEXTS, ...PAN_TEXTS]
      for (const [status, t] of texts.flatMap((t) => [[400, t], [500, t]] as const)) {
        const body = status === 400 ? { type: "validation-error", "error-code": "invalid-field", "error-message": t, "serial-number": "1" } : { "error-code": "internal", "error-message": t }
        const pay = client(sim, { fetch: async () => Response.json(body, { status }), deadlineMs: 300, retry: { maxRetries: 0, baseDelayMs: 1, maxDelayMs: 1 } })
        const r = await settled(pay.status({ client_orderid: "x-1" }))
        expect(r.ok).toBe(false)
        const shown = JSON.stringify({ message: !r.ok && r.error.message, error: !r.ok && r.error })
        expect(shown, t).not.toContain("987")
        expect(shown.replace(/[^0-9*]/g, ""), t).not.toContain(PAN)
      }
    } finally {
      await sim.close()
    }
  })
})
