import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts", "src/operations.ts", "src/card-data.ts", "src/effect-version.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // keep `node:crypto` etc. as written (tsup strips the prefix by default)
  removeNodeProtocol: false
})
