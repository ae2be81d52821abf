/**
 * Fleet probe, the processing window runs from the last send (window-from-send.scenarios.ts) on the
 * memory store and on PGlite.
 */
import { beforeEach } from "vitest"
import { startTestTime, useTestTime } from "../support/test-time"
import { runScenarios } from "./support"
import { windowFromSend } from "./window-from-send.scenarios"

// On the controlled clock (support/test-time.ts): leases, windows and deadlines race only each other.
useTestTime()
beforeEach(startTestTime)

runScenarios("the processing window runs from the last send", windowFromSend)
