// Placeholder until the demo issue lands: the tour needs the client and the simulator.
import { operations } from "@paykit/contracts"

const ids = Object.keys(operations)
console.log(`PayKit demo: not built yet. The contracts know ${ids.length} operations:`)
console.log(ids.join(", "))
