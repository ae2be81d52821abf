#!/usr/bin/env node
// `paykit`, the PayKit command. A published package (no src/) runs the built
// dist/cli.js; inside the workspace the launcher both PayKit commands share runs src/cli.ts.
import { existsSync } from "node:fs"

if (existsSync(new URL("../src/cli.ts", import.meta.url))) {
  const { runWorkspaceBin } = await import("../../../scripts/workspace-bin.mjs")
  await runWorkspaceBin(new URL("../", import.meta.url), "paykit")
} else {
  await import("../dist/cli.js")
}
