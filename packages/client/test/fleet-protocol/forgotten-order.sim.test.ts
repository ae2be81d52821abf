/**
 * Fleet probe, an order the gateway forgot (forgotten-order.scenarios.ts) on the memory store and
 * on PGlite.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { forgottenOrder } from "./forgotten-order.scenarios"
import { runScenarios } from "./support"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("order-not-found on an old intent", forgottenOrder)
