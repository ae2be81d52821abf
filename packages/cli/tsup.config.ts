import { rm } from "node:fs/promises"
import { defineConfig } from "tsup"

export default defineConfig({
  // src/cli.ts is the `paykit` program: bin/paykit.js imports dist/cli.js (ESM) and shares the
  // command chunk with index.js; it is no importable entry, so it gets no .d.ts and no CJS copy.
  entry: ["src/index.ts", "src/cli.ts"],
  format: ["esm", "cjs"],
  dts: { entry: "src/index.ts" },
  sourcemap: true,
  clean: true,
  target: "node20",
  // keep `node:crypto` etc. as written (tsup strips the prefix by default)
  removeNodeProtocol: false,
  async onSuccess() {
    await Promise.all(["cli.cjs", "cli.cjs.map"].map((f) => rm(new URL(`./dist/${f}`, import.meta.url), { force: true })))
  }
})
