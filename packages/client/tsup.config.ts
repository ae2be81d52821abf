import { defineConfig, type Options } from "tsup"

type Plugin = NonNullable<Options["esbuildPlugins"]>[number]

/**
 * openapi-fetch's CommonJS build sets `exports.default = createClient` with `__esModule`. This
 * package is `"type": "module"`, so esbuild compiles `import createClient from "openapi-fetch"`
 * for the CJS output with Node's interop (default = the whole `module.exports` object), and
 * `require("@paykit/client")` would fail with "createClient is not a function". For the CJS build
 * only, route that import through a shim that picks the function either way. The ESM build keeps
 * the plain import (Node loads openapi-fetch's ESM build, whose default export is the function).
 */
const openapiFetchCjsInterop: Plugin = {
  name: "openapi-fetch-cjs-interop",
  setup(build) {
    const cjs = build.initialOptions.format === "cjs"
    build.onResolve({ filter: /^openapi-fetch$/ }, (args) =>
      cjs && args.namespace !== "paykit-interop"
        ? { path: "openapi-fetch", namespace: "paykit-interop" }
        : { path: "openapi-fetch", external: true }
    )
    build.onLoad({ filter: /.*/, namespace: "paykit-interop" }, () => ({
      contents: [
        'import * as ns from "openapi-fetch"',
        "const d = ns.default",
        'export default typeof d === "function" ? d : d.default'
      ].join("\n"),
      loader: "js",
      resolveDir: process.cwd()
    }))
  }
}

export default defineConfig({
  // The store adapters are entry points of their own (`@paykit/client/store/pglite`, `.../postgres`)
  // so the core bundle never loads their optional peer dependencies.
  entry: { index: "src/index.ts", promise: "src/promise-entry.ts", "store/pglite": "src/store/pglite.ts", "store/postgres": "src/store/postgres.ts" },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  // keep `node:crypto` etc. as written (tsup strips the prefix by default)
  removeNodeProtocol: false,
  // tsup's own externals plugin runs before esbuildPlugins: leave openapi-fetch to the plugin
  // above, which keeps it external in both formats.
  noExternal: ["openapi-fetch"],
  esbuildPlugins: [openapiFetchCjsInterop]
})
