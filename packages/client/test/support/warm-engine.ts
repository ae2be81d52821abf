/**
 * Setup of every client test file: the modules the client loads on first use (its call engine, the
 * callback fields' Schemas) load before the file's tests run, as they have after an application's
 * first call. A test on the controlled clock then never waits on the real I/O of that first load,
 * which the clock would run ahead of (test-time.ts). `test/lazy-engine.test.ts` covers the first
 * load itself, and `test/cold-import.test.ts` what the import leaves to it.
 */
import { loadCallbackFields } from "../../src/callbacks/verify"
import { loadClientEngine } from "../../src/lazy-engine"

await Promise.all([loadClientEngine(), loadCallbackFields()])
