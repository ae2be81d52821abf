/**
 * A copy of the bundled vectors in a temp folder with some cases edited, for the tests that check a
 * runner fails on them (in process and from the command line); every copy is removed after its file.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { VECTORS_DIR } from "./vectors"

/** The three vector files as parsed JSON, for an edit. */
export interface VectorFiles {
  control: any
  oauth: any
  callback: any
}

const temp: Array<string> = []
afterAll(() => {
  for (const dir of temp) rmSync(dir, { recursive: true, force: true })
})

/** A temp copy of the vectors after `edit`; its folder. */
export function tamperedCopy(edit: (files: VectorFiles) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "paykit-vectors-"))
  temp.push(dir)
  cpSync(VECTORS_DIR, dir, { recursive: true })
  const read = (name: string) => JSON.parse(readFileSync(join(dir, name), "utf8"))
  const files: VectorFiles = { control: read("control.json"), oauth: read("oauth.json"), callback: read("callback.json") }
  edit(files)
  writeFileSync(join(dir, "control.json"), JSON.stringify(files.control))
  writeFileSync(join(dir, "oauth.json"), JSON.stringify(files.oauth))
  writeFileSync(join(dir, "callback.json"), JSON.stringify(files.callback))
  return dir
}
