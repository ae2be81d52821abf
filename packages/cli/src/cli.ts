/**
 * The `paykit` program (bin/paykit.js runs it): the process's arguments in, its exit code out.
 *
 * @packageDocumentation
 */
import { run } from "./run"

// No top-level await: tsup also emits a CommonJS copy of every entry (deleted after the build).
void run(process.argv.slice(2)).then((code) => {
  process.exitCode = code
})
