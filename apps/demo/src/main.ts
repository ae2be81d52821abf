/**
 * `pnpm demo` runs the tour of every flow; `pnpm demo --serve [--port N] [--host H]` starts the
 * small shop. Mistakes and a taken port are one line on stderr, never a stack.
 */
import { DemoUsageError, demoHelp, listenErrorLine, parseDemoArgs, type DemoArgs } from "./args"

let args: DemoArgs
try {
  args = parseDemoArgs(process.argv.slice(2))
} catch (error) {
  if (!(error instanceof DemoUsageError)) throw error
  process.stderr.write(`demo: ${error.message}\n`)
  process.exit(2)
}

if (args.mode === "help") {
  process.stdout.write(demoHelp)
} else if (args.mode === "serve") {
  const { startShop } = await import("./shop/server")
  const { port, host } = args
  try {
    const shop = await startShop({ port, host })
    console.log(`PayKit demo shop on ${shop.url} (simulator on ${shop.simulatorUrl}); Ctrl-C to stop`)
    const stop = () => void shop.close().then(() => process.exit(0))
    process.on("SIGINT", stop)
    process.on("SIGTERM", stop)
  } catch (error) {
    const line = listenErrorLine(error, port, host)
    if (line === undefined) throw error
    process.stderr.write(`demo: ${line}\n`)
    process.exit(1)
  }
} else {
  const { runTour } = await import("./run-tour")
  const ok = await runTour()
  process.exit(ok ? 0 : 1)
}
