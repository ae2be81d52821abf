/**
 * Fleet probe, a call's lease covers its own deadline (lease-covers-deadline.scenarios.ts) on the
 * memory store and on PGlite.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { leaseCoversDeadline } from "./lease-covers-deadline.scenarios"
import { runScenarios } from "./support"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("a call's lease covers its deadline", leaseCoversDeadline)
