/**
 * A differential model test: random sequences of store commands (fast-check) run on the adapter
 * under test and on a fresh memory store side by side, on one manual clock; every answer must be
 * equal. This is what "one semantics over three adapters" means, checked beyond the hand-written
 * cases (lease edges, take-overs after release, purges between claims, conflicts, nonces).
 */
import { Effect } from "effect"
import fc from "fast-check"
import { isDeepStrictEqual } from "node:util"
import { memoryBackend } from "../../src/store/memory"
import { makePayStore, type PayStoreService } from "../../src/store/service"
import type { IntentInput } from "../../src/store/types"
import { ManualClock } from "./support"

const owners = ["a", "b", "c"] as const
const keys = ["k0", "k1", "k2", "k3"] as const
const queries = ["status=approved&orderid=1", "status=approved&orderid=2", "status=declined&orderid=1"] as const

type Command =
  | { readonly c: "recordIntent"; readonly key: number; readonly variant: number; readonly owner: number; readonly leaseMs: number }
  | { readonly c: "recordOutcome"; readonly key: number; readonly failed: boolean; readonly attempt: number | undefined }
  | { readonly c: "releaseIntent"; readonly key: number; readonly attempt: number }
  | { readonly c: "takeOrderLease"; readonly order: number; readonly key: number; readonly owner: number; readonly leaseMs: number }
  | { readonly c: "findByKey"; readonly key: number }
  | { readonly c: "extendIntentLease"; readonly key: number; readonly owner: number; readonly leaseMs: number; readonly attempt: number | undefined; readonly sendsWithinMs: number | undefined }
  | { readonly c: "unfinished"; readonly olderThanMs: number; readonly owner: number; readonly limit: number }
  | { readonly c: "claimCallback"; readonly q: number; readonly owner: number; readonly leaseMs: number }
  | { readonly c: "completeCallback"; readonly q: number }
  | { readonly c: "releaseCallback"; readonly q: number; readonly owner: number }
  | { readonly c: "rememberNonce"; readonly nonce: number; readonly ttl: number }
  | { readonly c: "purge"; readonly olderThanMs: number }
  | { readonly c: "advance"; readonly ms: number }

const idx = (n: number) => fc.integer({ min: 0, max: n - 1 })
const lease = fc.constantFrom(1000, 3000)

/** Commands over a few keys, owners and queries, so collisions are frequent. */
export const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ c: fc.constant("recordIntent" as const), key: idx(keys.length), variant: idx(3), owner: idx(owners.length), leaseMs: lease }),
  fc.record({ c: fc.constant("recordOutcome" as const), key: idx(keys.length), failed: fc.boolean(), attempt: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }) }),
  fc.record({ c: fc.constant("releaseIntent" as const), key: idx(keys.length), attempt: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ c: fc.constant("takeOrderLease" as const), order: idx(2), key: idx(keys.length), owner: idx(owners.length), leaseMs: lease }),
  fc.record({ c: fc.constant("findByKey" as const), key: idx(keys.length) }),
  fc.record({
    c: fc.constant("extendIntentLease" as const), key: idx(keys.length), owner: idx(owners.length), leaseMs: lease,
    attempt: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), sendsWithinMs: fc.option(fc.constantFrom(0, 500), { nil: undefined })
  }),
  fc.record({ c: fc.constant("unfinished" as const), olderThanMs: fc.constantFrom(0, 1500), owner: idx(owners.length), limit: fc.integer({ min: 1, max: 3 }) }),
  fc.record({ c: fc.constant("claimCallback" as const), q: idx(queries.length), owner: idx(owners.length), leaseMs: lease }),
  fc.record({ c: fc.constant("completeCallback" as const), q: idx(queries.length) }),
  fc.record({ c: fc.constant("releaseCallback" as const), q: idx(queries.length), owner: idx(owners.length) }),
  fc.record({ c: fc.constant("rememberNonce" as const), nonce: idx(2), ttl: fc.constantFrom(1, 5) }),
  fc.record({ c: fc.constant("purge" as const), olderThanMs: fc.constantFrom(0, 2000) }),
  fc.record({ c: fc.constant("advance" as const), ms: fc.constantFrom(0, 1, 999, 1000, 1500, 3000) })
)

function intentOf(key: number, variant: number): IntentInput {
  // Variants 0 and 1 are the same request ("10.50" = "10.5"); variant 2 differs in amount.
  const amount = ["10.50", "10.5", "99.00"][variant]
  return { idempotencyKey: keys[key]!, operation: "SALE", client_orderid: `o-${key}`, amount, currency: "EUR", endpoint: "1001" }
}

function apply(store: PayStoreService, cmd: Command, clock: ManualClock): Effect.Effect<unknown, unknown> {
  const owner = (i: number) => owners[i]!
  switch (cmd.c) {
    case "recordIntent":
      return store.recordIntent(intentOf(cmd.key, cmd.variant), { leaseMs: cmd.leaseMs, owner: owner(cmd.owner) })
    case "recordOutcome":
      return store.recordOutcome(keys[cmd.key]!, cmd.failed
        ? { _tag: "Failed", errorTag: "OutcomeUnknown", data: { step: clock.now } }
        : { _tag: "Returned", status: "approved", orderid: "9", data: { at: clock.now, list: [1, "x"] } }, cmd.attempt === undefined ? undefined : { attempt: cmd.attempt })
    case "releaseIntent":
      return store.releaseIntent(keys[cmd.key]!, { attempt: cmd.attempt })
    // Order leases' tokens are the adapter's own counters (one per order in SQL, one per store in
    // memory): compared by what they decide, not by their values.
    case "takeOrderLease":
      return Effect.map(store.takeOrderLease(`70${cmd.order}`, { idempotencyKey: keys[cmd.key]!, leaseMs: cmd.leaseMs, owner: owner(cmd.owner) }), (r) =>
        r._tag === "Taken" ? { _tag: r._tag, leaseUntil: r.leaseUntil } : r)

    case "findByKey":
      return store.findByKey(keys[cmd.key]!)
    case "extendIntentLease":
      return store.extendIntentLease(keys[cmd.key]!, { leaseMs: cmd.leaseMs, owner: owner(cmd.owner), sendsWithinMs: cmd.sendsWithinMs }, cmd.attempt === undefined ? undefined : { attempt: cmd.attempt })
    case "unfinished":
      return store.unfinished({ olderThanMs: cmd.olderThanMs, leaseMs: 2000, owner: owner(cmd.owner), limit: cmd.limit })
    case "claimCallback":
      return store.claimCallback(queries[cmd.q]!, { leaseMs: cmd.leaseMs, owner: owner(cmd.owner) })
    case "completeCallback":
      return store.completeCallback(queries[cmd.q]!)
    case "releaseCallback":
      return store.releaseCallback(queries[cmd.q]!, owner(cmd.owner))
    case "rememberNonce": {
      const now = Math.floor(clock.now / 1000)
      return store.rememberNonce("ck", `n${cmd.nonce}`, now + cmd.ttl, now)
    }
    case "purge":
      return store.purge(cmd.olderThanMs)
    case "advance":
      return Effect.void // moved by the runner, once for both stores
  }
}

/** Runs `cmds` on `subject` (emptied first) and on a fresh memory store; throws at the first difference. */
export async function compareWithModel(subject: PayStoreService, reset: () => Promise<void>, cmds: ReadonlyArray<Command>, start: number): Promise<void> {
  await reset()
  const model = makePayStore(memoryBackend(), { instanceId: "model" })
  const clock = new ManualClock(start)
  for (const [step, cmd] of cmds.entries()) {
    if (cmd.c === "advance") {
      clock.now += cmd.ms
      continue
    }
    const run = (store: PayStoreService) => Effect.runPromise(Effect.withClock(Effect.either(apply(store, cmd, clock)), clock))
    const expected = await run(model)
    const actual = await run(subject)
    // Through JSON, an absent optional field and an undefined one compare equal; key order is ignored.
    const a = JSON.stringify(actual)
    const e = JSON.stringify(expected)
    if (!isDeepStrictEqual(JSON.parse(a), JSON.parse(e))) throw new Error(`step ${step} ${JSON.stringify(cmd)}:\n  adapter ${a}\n  model   ${e}`)
  }
}
