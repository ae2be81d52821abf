/**
 * Clear errors (naming the argument and the rule), exit codes (0 ok, 1 failed, 2 usage), --help on
 * every command, --json output, and no key in any output.
 */
import { describe, expect, it } from "vitest"
import { paykit, vectorsDir } from "./helpers"

const KEY = "B17F59B4-A7DC-41B4-8FF9-37D986B43D20"
const sale = ["SALE", "client_orderid=o-1", "amount=10.42", "currency=USD", "email=a@b.c", "--endpoint-id", "1001"]

describe("usage errors exit 2 and name the argument and the rule", () => {
  const cases: Array<[string, Array<string>, RegExp]> = [
    ["no command", [], /^Usage: paykit <command>/],
    ["an unknown command", ["sing"], /^paykit: sing: not a command; one of sign, explain, verify-callback, status, trigger/],
    ["an unknown option", ["sign", ...sale, "--key", KEY, "--bogus"], /^paykit sign: --bogus: not an option of paykit sign \(see paykit sign --help\)/],
    ["an option without its value", ["sign", ...sale, "--key"], /^paykit sign: --key: needs a value/],
    ["a value given to a flag", ["sign", ...sale, "--key", KEY, "--json=yes"], /^paykit sign: --json: takes no value/],
    ["an option given twice", ["sign", ...sale, "--key", KEY, "--key", KEY], /^paykit sign: --key: given 2 times; give it once/],
    ["no operation", ["sign"], /^paykit sign: OPERATION_ID: missing; one of TDS_UPLOAD_CRES_RESULT, /],
    ["an unknown operation", ["sign", "REFUND", "--key", KEY], /^paykit sign: OPERATION_ID: "REFUND" is not an operation; one of /],
    ["a field without =", ["sign", "SALE", "amount", "--key", KEY], /^paykit sign: amount: a field must be written name=value/],
    ["a field given twice", ["sign", ...sale, "amount=1.00", "--key", KEY], /^paykit sign: amount: given twice/],
    ["no key", ["sign", ...sale], /^paykit sign: --key: the control of SALE \(C6\) ends with the merchant control key; give --key K, --key-file FILE or set PAYKIT_CONTROL_KEY/],
    ["no endpoint id for C6", ["sign", "SALE", "client_orderid=o", "amount=1", "currency=USD", "email=", "--key", KEY], /^paykit sign: --endpoint-id: the control of SALE \(C6\) includes the endpoint id/],
    ["a malformed amount", ["sign", ...sale.filter((a) => !a.startsWith("amount=")), "amount=1e3", "--key", KEY], /^paykit sign: amount: must be a decimal string matching \^\(0\|\[1-9\]\[0-9\]\*\)\(\\\.\[0-9\]\+\)\?\$ \(e\.g\. 10\.42\), in major units/],
    ["an amount with too many digits", ["sign", ...sale.filter((a) => !a.startsWith("amount=")), "amount=10.421", "--key", KEY], /^paykit sign: amount: has a non-zero digit beyond the 2 fraction digits that minor units \(cents\) keep for USD; amounts are never rounded/],
    ["an amount without currency", ["sign", "CAPTURE", "login=m", "client_orderid=o", "orderid=1", "amount=1.00", "--key", KEY], /^paykit sign: currency: needed to scale amount/],
    ["an unknown currency", ["sign", ...sale.filter((a) => !a.startsWith("currency=")), "currency=usd", "--key", KEY], /^paykit sign: currency: "usd" is not an ISO 4217 alphabetic code/],
    ["an unknown minor-units mode", ["sign", ...sale, "--key", KEY, "--minor-units", "iso"], /^paykit sign: --minor-units: "iso" is not a mode; one of cents \(the default\), iso4217/],
    ["OAuth without a login", ["sign", "PAYOUT", "amount=1.00", "--key", KEY, "--url", "https://h/p"], /^paykit sign: --login: PAYOUT is OAuth-signed; its oauth_consumer_key is the merchant login/],
    ["OAuth without a URL", ["sign", "PAYOUT", "amount=1.00", "--key", KEY, "--login", "m"], /^paykit sign: --base-url: PAYOUT is OAuth-signed and its base string includes the request URL/],
    ["RSA without a private key", ["sign", "PAYOUT_V4_CHECK", "amount=1.00", "--login", "m", "--url", "https://h/p"], /^paykit sign: --private-key: PAYOUT_V4_CHECK is signed with OAuth RSA-SHA256; give --private-key FILE/],
    ["an unreadable private key", ["sign", "PAYOUT_V4_CHECK", "--login", "m", "--url", "https://h/p", "--private-key", "/nonexistent/key.pem"], /^paykit sign: --private-key: cannot read \/nonexistent\/key\.pem \(ENOENT\)/],
    ["a private key that is not one", ["sign", "PAYOUT_V4_CHECK", "--login", "m", "--url", "https://h/p", "--private-key", `${vectorsDir}keys/rsa2048.pub.pem`], /^paykit sign: --private-key: cannot load key: wrong-key-type/],
    ["a reserved OAuth name in the body", ["sign", "PAYOUT", "oauth_nonce=x", "--key", KEY, "--login", "m", "--url", "https://h/p"], /^paykit sign: oauth_nonce: reserved-name/],
    ["verify-callback without input", ["verify-callback", "--key", KEY], /^paykit verify-callback: QUERY_OR_URL: missing/],
    ["status without client_orderid", ["status", "--base-url", "http://h", "--login", "m", "--key", KEY, "--endpoint-id", "1"], /^paykit status: --client-orderid: required/],
    ["status with a bad endpoint id", ["status", "--client-orderid", "o", "--base-url", "http://h", "--login", "m", "--key", KEY, "--endpoint-id", "x1"], /^paykit status: --endpoint-id: must be a decimal integer/],
    ["an unknown trigger", ["trigger", "refund"], /^paykit trigger: TRIGGER: "refund" is not a trigger; one of fail-callback, decline-next, chargeback/],
    ["a bad trigger count", ["trigger", "fail-callback", "--count", "0"], /^paykit trigger: --count: must be a positive integer/]
  ]
  for (const [name, argv, message] of cases) {
    it(name, async () => {
      const ran = await paykit(argv)
      expect(ran.code).toBe(2)
      expect(argv.length === 0 ? ran.stdout : ran.stderr).toMatch(message)
      // one line, no stack
      if (argv.length > 0) expect(ran.stderr.trim().split("\n")).toHaveLength(1)
      expect(ran.stdout + ran.stderr).not.toContain(KEY)
    })
  }

  it("--json adds the error as data on stdout", async () => {
    const ran = await paykit(["sign", ...sale, "--json"])
    expect(ran.code).toBe(2)
    expect(JSON.parse(ran.stdout)).toEqual({ ok: false, error: { kind: "usage", argument: "--key", rule: expect.stringContaining("merchant control key") } })
  })
})

describe("--help on every command", () => {
  for (const command of ["sign", "explain", "verify-callback", "status", "trigger"]) {
    it(`paykit ${command} --help`, async () => {
      const ran = await paykit([command, "--help"])
      expect(ran.code).toBe(0)
      expect(ran.stdout).toMatch(new RegExp(`^Usage: paykit ${command} `))
      expect(ran.stdout).toContain("--json")
      expect(ran.stdout).toContain("Exit codes: 0 ok, 1 verification failed or the remote side refused, 2 usage error.")
    })
  }
  it("paykit --help lists the commands", async () => {
    const ran = await paykit(["--help"])
    expect(ran.code).toBe(0)
    for (const command of ["sign", "explain", "verify-callback", "status", "trigger"]) expect(ran.stdout).toMatch(new RegExp(`^  ${command} `, "m"))
  })
  it("documents --minor-units and --private-key on sign", async () => {
    const ran = await paykit(["sign", "--help"])
    expect(ran.stdout).toMatch(/--minor-units MODE\s+how amount enters a control digest: cents .*iso4217/)
    expect(ran.stdout).toMatch(/--private-key FILE\s+PEM private key/)
  })
})

describe("keys from the environment or a file", () => {
  it("reads PAYKIT_CONTROL_KEY and PAYKIT_ENDPOINT_ID", async () => {
    const ran = await paykit(["sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com"], { env: { PAYKIT_CONTROL_KEY: KEY, PAYKIT_ENDPOINT_ID: "1111" } })
    expect(ran.stdout).toBe("c6bdd88a78834ef4b863b088827a459f039e8257\n")
  })
  it("refuses --key and --key-file together", async () => {
    const ran = await paykit(["sign", ...sale, "--key", KEY, "--key-file", "/tmp/x"])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toMatch(/--key-file: give either --key or --key-file, not both/)
  })
})

describe("sign --json", () => {
  it("a control", async () => {
    const ran = await paykit(["sign", "SALE", "client_orderid=902B4FF5", "amount=10.42", "currency=USD", "email=john.smith@gmail.com", "--endpoint-id", "1111", "--key", KEY, "--json"])
    expect(JSON.parse(ran.stdout)).toEqual({ operationId: "SALE", scheme: "control", code: "C6", minorUnits: "cents", control: "c6bdd88a78834ef4b863b088827a459f039e8257" })
  })
  it("an OAuth header", async () => {
    const ran = await paykit(["sign", "payout", "amount=1.00", "--key", KEY, "--login", "m", "--base-url", "https://h.example/paynet/", "--endpoint-id", "7", "--nonce", "n", "--timestamp", "1", "--json"])
    const x = JSON.parse(ran.stdout) as Record<string, string>
    expect(x["operationId"]).toBe("PAYOUT")
    expect(x["scheme"]).toBe("oauth-hmac-sha1")
    expect(x["url"]).toBe("https://h.example/paynet/api/v2/payout/7")
    expect(x["authorization"]).toMatch(/^OAuth oauth_consumer_key="m", oauth_nonce="n", oauth_signature="[^"]+", oauth_signature_method="HMAC-SHA1", oauth_timestamp="1", oauth_version="1.0"$/)
    expect(ran.stdout).not.toContain(KEY)
  })
})
