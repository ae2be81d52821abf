/**
 * Test support for the store suite: a manual clock (leases expire when a test says so, with no
 * sleeping), the harness each adapter provides, and data carrying card numbers and secrets that
 * must never reach storage.
 */
import { Clock, Duration, Effect } from "effect"
import type { PayStoreService } from "../../src/store/service"

/** A clock that moves only when told. */
export class ManualClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  constructor(public now: number) {}
  unsafeCurrentTimeMillis(): number {
    return this.now
  }
  get currentTimeMillis(): Effect.Effect<number> {
    return Effect.sync(() => this.now)
  }
  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.now) * 1_000_000n
  }
  get currentTimeNanos(): Effect.Effect<bigint> {
    return Effect.sync(() => this.unsafeCurrentTimeNanos())
  }
  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return Effect.sync(() => {
      this.now += Duration.toMillis(duration)
    })
  }
}

/** What each adapter's test file hands to the suite. */
export interface Harness {
  /** A migrated store (recreated or emptied by `reset`). */
  readonly store: () => PayStoreService
  /** A second store object on the same storage, with another `instanceId` (another fleet member). */
  readonly peer: () => PayStoreService
  /** Empties every table. */
  readonly reset: () => Promise<void>
  /** Everything the storage holds, as text (rows as JSON), to search for what must not be kept. */
  readonly dump: () => Promise<string>
  /** Opens one more store on the same storage with migrations on (to apply them a second time). */
  readonly reopen: () => Promise<PayStoreService & { close: () => Promise<void> }>
  /** Releases everything. */
  readonly close: () => Promise<void>
}

/** Card numbers (Luhn-valid test PANs), a CVV and a control digest that no store may keep. */
export const secrets = {
  pans: ["4111111111111111", "5555555555554444", "4000000000000002", "4000000000003220"],
  cvv: "737",
  control: "3f786850e387550fdab836ed7e6dc881de23001b",
  privateKey: "-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEA\n-----END PRIVATE KEY-----"
} as const

/** A sale request as a merchant writes it: card data included. */
export function saleRequest(key: string) {
  return {
    idempotencyKey: key,
    operation: "SALE",
    client_orderid: `order-${key}`,
    amount: "10.00",
    currency: "USD",
    endpoint: "1001",
    credit_card_number: secrets.pans[0],
    cvv2: secrets.cvv,
    card_printed_name: "JANE DOE",
    control: secrets.control
  }
}

/** A reply-shaped JSON with card data in every shape a gateway or a careless caller might produce. */
export function leakyResult() {
  return {
    type: "async-response",
    status: "approved",
    "paynet-order-id": "9001",
    "credit-card-number": secrets.pans[1],
    credit_card_number: secrets.pans[0],
    cvv2: secrets.cvv,
    control: secrets.control,
    "error-message": `card pan=${secrets.pans[2]}x rejected; ccn_${secrets.pans[3]} retried`,
    nested: [{ card_no: secrets.pans[1] }, { note: `echo ${secrets.pans[0]}` }, 4000000000000002],
    privateKeyPem: secrets.privateKey,
    pem: secrets.privateKey
  }
}
