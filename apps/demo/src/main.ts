/**
 * `pnpm demo` runs the tour of every flow; `pnpm demo --serve` starts the small shop.
 */
import { runTour } from "./run-tour"

const args = process.argv.slice(2)
if (args.includes("--serve")) {
  const { startShop } = await import("./shop/server")
  const portArg = args[args.indexOf("--port") + 1]
  const shop = await startShop({ port: args.includes("--port") && portArg ? Number(portArg) : 3000 })
  console.log(`PayKit demo shop on ${shop.url} (simulator on ${shop.simulatorUrl}); Ctrl-C to stop`)
  const stop = () => void shop.close().then(() => process.exit(0))
  process.on("SIGINT", stop)
  process.on("SIGTERM", stop)
} else {
  const ok = await runTour()
  process.exit(ok ? 0 : 1)
}
