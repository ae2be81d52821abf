/**
 * The simulator as its own process (a child of the fleet run, on the real clock): the gateway every
 * worker talks to over HTTP, and whose ledger (`/__sim/orders`, `/__sim/invariants`) the audit reads.
 * It exits when its parent goes away (the IPC channel closes), so a dead run leaves no simulator.
 */
import { createSimulator } from "@paykit/testkit"

const processingDelayMs = Number(process.env["FLEET_PROCESSING_DELAY_MS"] ?? "50")
const sim = createSimulator({ clock: "real", processingDelayMs })
const server = await sim.listen({ port: 0, host: "127.0.0.1" })
process.on("disconnect", () => process.exit(0))
process.send?.({ t: "ready", url: server.url })
