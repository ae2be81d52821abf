/**
 * The installed command: bin/paykit.js as a process, its output and exit codes.
 */
import { describe, expect, it } from "vitest"
import { HANG_GUARD_MS, runToExit } from "../../../test-support/spawn"

const bin = new URL("../bin/paykit.js", import.meta.url).pathname
const paykit = (...args: Array<string>) => runToExit(process.execPath, [bin, ...args], { env: { ...process.env, PAYKIT_CONTROL_KEY: "" } })

// Each test starts `node` (and tsx inside the workspace): its time is the machine's, so the test
// timeout is only a hang guard above the child's own.
describe("bin/paykit.js", { timeout: HANG_GUARD_MS + 30_000 }, () => {
  it("signs the gateway's published sale example (exit 0)", async () => {
    const r = await paykit("sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", "B17F59B4-A7DC-41B4-8FF9-37D986B43D20")
    expect(r).toEqual({ code: 0, stdout: "c6bdd88a78834ef4b863b088827a459f039e8257\n", stderr: "" })
  })

  it("exits 2 on a usage error with one line on stderr", async () => {
    const r = await paykit("sign", "SALE", "--endpoint-id")
    expect(r.code).toBe(2)
    expect(r.stderr).toBe('paykit sign: --endpoint-id: needs a value (write --endpoint-id=VALUE when the value starts with "-") (see paykit sign --help)\n')
  })

  it("exits 1 when a callback does not verify", async () => {
    const r = await paykit("verify-callback", "status=approved&orderid=1&client_orderid=x&control=" + "0".repeat(40), "--key", "k")
    expect(r.code).toBe(1)
    expect(r.stderr).toBe("paykit verify-callback: callback not verified: control mismatch (wrong key, or a signed field was changed)\n")
  })
})
