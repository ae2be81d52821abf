/**
 * Fleet probe, two live instances calling on one order take turns (order-lease.scenarios.ts) on the
 * memory store and on PGlite. The same hole seen from callbacks, instances that share claims but
 * not intents, is the expected failure in test/callbacks/forgery.sim.test.ts.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { orderLease } from "./order-lease.scenarios"
import { runScenarios } from "./support"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("calls on one order across instances take turns", orderLease)
