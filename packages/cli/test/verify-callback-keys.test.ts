/**
 * `paykit verify-callback` during a control-key rotation: several `--key`s (current first), the
 * verdict names the index of the key that matched and never a key.
 */
import { callbackControl } from "@paykit/signing"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { paykit } from "./helpers"

const NEW = "9D2B7C41-6E0A-4F58-B3C2-1A7E5D9F0C64"
const OLD = "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F"
const THIRD = "0F0F0F0F-AAAA-4BBB-8CCC-DDDDDDDDDDDD"
const values = { status: "approved", orderid: "1000001", client_orderid: "o-1" }
const query = (key: string) => new URLSearchParams({ ...values, type: "sale", amount: "10.00", control: callbackControl(values, key) }).toString()
const dir = mkdtempSync(join(tmpdir(), "paykit-keys-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe("verify-callback with several --keys", () => {
  it("accepts the old key and the new key, saying which index matched", async () => {
    const fromNew = await paykit(["verify-callback", query(NEW), "--key", NEW, "--key", OLD])
    expect(fromNew.code).toBe(0)
    expect(fromNew.stdout).toMatch(/^callback control: valid \(key index 0: the 1st of 2 keys\)/)
    const fromOld = await paykit(["verify-callback", query(OLD), "--key", NEW, "--key", OLD])
    expect(fromOld.code).toBe(0)
    expect(fromOld.stdout).toMatch(/^callback control: valid \(key index 1: the 2nd of 2 keys\)/)
    const json = JSON.parse((await paykit(["verify-callback", query(OLD), "--key", NEW, "--key", OLD, "--json"])).stdout) as Record<string, unknown>
    expect(json).toMatchObject({ ok: true, control: "valid", keyIndex: 1, keys: 2 })
  })

  it("refuses a third key with a reason that names no key", async () => {
    const ran = await paykit(["verify-callback", query(THIRD), "--key", NEW, "--key", OLD])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe("paykit verify-callback: callback not verified: control mismatch (none of the 2 keys, or a signed field was changed)\n")
    const json = await paykit(["verify-callback", query(THIRD), "--key", NEW, "--key", OLD, "--json"])
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, control: "mismatch", keyIndex: null })
    for (const key of [NEW, OLD, THIRD]) {
      expect(ran.stdout + ran.stderr + json.stdout + json.stderr).not.toContain(key)
    }
  })

  it("reads one key per --key-file, keeps a single --key working, and refuses an empty --key", async () => {
    writeFileSync(join(dir, "new"), `${NEW}\n`)
    writeFileSync(join(dir, "old"), `${OLD}\n`)
    const files = await paykit(["verify-callback", query(OLD), "--key-file", join(dir, "new"), "--key-file", join(dir, "old"), "--json"])
    expect(JSON.parse(files.stdout)).toMatchObject({ ok: true, keyIndex: 1, keys: 2 })
    const single = await paykit(["verify-callback", query(OLD), "--key", OLD])
    expect(single.stdout).toMatch(/^callback control: valid\n/)
    const empty = await paykit(["verify-callback", query(OLD), "--key", NEW, "--key", ""])
    expect(empty.code).toBe(2)
    expect(empty.stderr).toMatch(/--key: the 2nd --key is empty/)
  })
})
