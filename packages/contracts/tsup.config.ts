import { defineConfig } from "tsup"

export default defineConfig({
  entry: ["src/index.ts", "src/operations.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20"
})
