/**
 * Fleet probe, a resumed key (resumed-key.scenarios.ts) on the memory store and on PGlite.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { resumedKey } from "./resumed-key.scenarios"
import { runScenarios } from "./support"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("a resumed key goes through the shared store", resumedKey)
