// Where turbo keeps each workspace's task logs (<workspace>/.turbo/turbo-<task>.log), read by the
// last steps of `pnpm test`: test-summary.mjs and test-failures.mjs.
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"

export const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..")

/** The workspaces, as paths relative to the root. */
export const workspaces = ["packages", "apps"].flatMap((group) =>
  existsSync(join(root, group)) ? readdirSync(join(root, group)).map((name) => join(group, name)) : []
).concat(["stress", "fleet", "bench"])

/** A log's text without ANSI colours. */
// eslint-disable-next-line no-control-regex
export const plain = (text) => text.replace(/\x1b\[[0-9;]*m/g, "")
