/**
 * A child process for card-fingerprint-heap.heavy.test.ts: it loads only the simulator, builds the
 * card records the test is about, takes a heap snapshot of itself and scans the snapshot's strings
 * as they stream out (no whole-snapshot string, no JSON.parse). It prints one JSON line:
 * `{ kept, found, canary }` — the fingerprints orders and recurring payments keep, every 64-digit
 * hex string on the heap that starts with one of them, and whether the scan saw a 64-digit hex
 * string this process holds on purpose (so an empty `found` means "none there", not "scan blind").
 */
import { createHash } from "node:crypto"
import { getHeapSnapshot } from "node:v8"
import { createSimulator, requests } from "../../src/index"
import { engineOf } from "../../src/simulator/create"
import { buildRequest } from "../signed-request"

const sim = createSimulator({ processingDelayMs: 0 })
const send = async (operationId: Parameters<typeof buildRequest>[1], fields: Record<string, string>): Promise<number> =>
  (await sim.fetch(buildRequest(sim, operationId, fields))).status
const statuses: number[] = []
// Cards the simulator has not seen (each builds a card record from its fingerprint).
for (const pan of ["4242424242424242", "5555555555554444", "4012888888881881"]) {
  statuses.push(await send("SALE", requests.sale({ credit_card_number: pan })))
}
statuses.push(await send("PAN_ELIGIBILITY_SEND", requests.panEligibilitySend({ "sending-card-number": "378282246310005" })))
// A recurring payment keeps the request's card record itself (not the order's shared one).
statuses.push(await send("CREATE_RP_V4", requests.createRecurringPayment({ "credit-card-number": "6011111111111117" })))
const engine = engineOf(sim)!
const kept = [...engine.store.all().map((order) => order.card!.fingerprint), ...[...engine.recurring.values()].map((rp) => rp.card.fingerprint)]

/** A 64-digit hex string held until the scan ends: the scan must find it. */
const canary = { text: createHash("sha256").update("kept-fingerprints canary").digest("hex") }
const canaryText = canary.text

/** Every 64-digit lower-case hex string in the snapshot's JSON (a string entry is `"…"`). */
const found = new Set<string>()
let canarySeen = false
let tail = ""
// The snapshot is taken when getHeapSnapshot() is called (it first collects what nothing holds);
// the stream only serialises it.
for await (const chunk of getHeapSnapshot()) {
  const text = tail + String(chunk)
  for (const match of text.matchAll(/"([0-9a-f]{64})"/g)) {
    const hex = match[1]!
    if (hex === canaryText) canarySeen = true
    if (kept.some((fingerprint) => hex.startsWith(fingerprint))) found.add(hex)
  }
  // A string cut by a chunk boundary is whole in the next window (66 characters with its quotes).
  tail = text.slice(-70)
}
await sim.close()
process.stdout.write(`${JSON.stringify({ statuses, kept, found: [...found], canary: canarySeen && canary.text.length === 64 })}\n`)
