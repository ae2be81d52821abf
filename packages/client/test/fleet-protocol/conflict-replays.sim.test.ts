/**
 * Fleet probe, a conflict after a send replays (conflict-replays.scenarios.ts) on the memory store
 * and on PGlite.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { conflictReplays } from "./conflict-replays.scenarios"
import { runScenarios } from "./support"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("a conflict after a send is final", conflictReplays)
