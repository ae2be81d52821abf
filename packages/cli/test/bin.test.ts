/**
 * The installed command: bin/paykit.js as a process, its output and exit codes.
 */
import { spawnSync } from "node:child_process"
import { describe, expect, it } from "vitest"

const bin = new URL("../bin/paykit.js", import.meta.url).pathname
const paykit = (...args: Array<string>) => {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", timeout: 60_000, env: { ...process.env, PAYKIT_CONTROL_KEY: "" } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("bin/paykit.js", () => {
  it("signs the gateway's published sale example (exit 0)", () => {
    const r = paykit("sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", "B17F59B4-A7DC-41B4-8FF9-37D986B43D20")
    expect(r).toEqual({ code: 0, stdout: "c6bdd88a78834ef4b863b088827a459f039e8257\n", stderr: "" })
  })

  it("exits 2 on a usage error with one line on stderr", () => {
    const r = paykit("sign", "SALE", "--endpoint-id")
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('paykit sign: --endpoint-id: needs a value (write --endpoint-id=VALUE when the value starts with "-") (see paykit sign --help)\n')
  })

  it("exits 1 when a callback does not verify", () => {
    const r = paykit("verify-callback", "status=approved&orderid=1&client_orderid=x&control=" + "0".repeat(40), "--key", "k")
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("paykit verify-callback: callback not verified: control mismatch (wrong key, or a signed field was changed)\n")
  })
})
