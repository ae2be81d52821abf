/**
 * The `paykit` program (bin/paykit.js runs it): the process's arguments in, its exit code out.
 *
 * @packageDocumentation
 */
import { run } from "./run"

process.exitCode = await run(process.argv.slice(2))
