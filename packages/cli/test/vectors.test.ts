/**
 * `paykit sign` against every case of the shared vectors: control.json (in the minor-units mode
 * each case names) and oauth.json (HMAC-SHA1 and RSA-SHA256, fixed nonce and timestamp).
 */
import { describe, expect, it } from "vitest"
import { paykit, readJson, vectorsDir } from "./helpers"

interface ControlCase {
  id: string
  code: string
  operation: string
  values: Record<string, string>
  currency: string | null
  minor_units?: "cents" | "iso4217"
  merchant_control_key: string
  concatenation?: string
  control?: string
  error?: string
}

interface OAuthCase {
  id: string
  signature_method: "HMAC-SHA1" | "RSA-SHA256"
  url: string
  params: Array<[string, string]>
  oauth: Record<string, string>
  realm?: string
  consumer_secret?: string
  private_key?: string
  token_secret: string
  base_string: string
  normalized_params: string
  base_string_uri: string
  authorization_header: string
}

const control = readJson<{ cases: Array<ControlCase> }>("control.json")
const oauth = readJson<{ keys: Record<string, { private_key_file: string }>; cases: Array<OAuthCase> }>("oauth.json")

// The vectors name operations by their path; the CLI takes the interface's operation ids.
const OPERATION: Record<string, string> = {
  "tds-cres": "TDS_UPLOAD_CRES_RESULT",
  "tds-method-url": "TDS_UPLOAD_METHOD_URL_RESULT",
  "tds-pares": "TDS_UPLOAD_PARES_RESULT",
  "account-verification": "ACCOUNT_VERIFICATION",
  "account-verification-form": "ACCOUNT_VERIFICATION_FORM",
  "create-card-ref": "CARDREF",
  void: "VOID",
  capture: "CAPTURE",
  return: "RETURN",
  "make-rebill": "REBILL",
  sale: "SALE",
  "sale-form": "SALEFORM",
  preauth: "PREAUTH",
  "preauth-form": "PREAUTHFORM",
  status: "STATUS",
  "get-card-info": "CARDINFO"
}

const controlArgs = (c: ControlCase): Array<string> => {
  const fields = Object.entries(c.values).filter(([name]) => name !== "endpointId").map(([n, v]) => `${n}=${v}`)
  // C6 does not hash the currency but sends it: the amount is scaled by it.
  if (c.currency !== null && c.values["currency"] === undefined) fields.push(`currency=${c.currency}`)
  return [
    OPERATION[c.operation]!,
    ...fields,
    `--key=${c.merchant_control_key}`,
    ...(c.values["endpointId"] === undefined ? [] : ["--endpoint-id", c.values["endpointId"]]),
    ...(c.minor_units === undefined ? [] : ["--minor-units", c.minor_units])
  ]
}

describe("paykit sign agrees with control.json", () => {
  it("covers every operation the vectors name", () => {
    expect(control.cases.length).toBeGreaterThanOrEqual(75)
    for (const c of control.cases) expect(OPERATION[c.operation], c.operation).toBeDefined()
  })

  for (const c of control.cases) {
    it(`${c.id} (${c.code}${c.minor_units === undefined ? "" : `, ${c.minor_units}`})`, async () => {
      const ran = await paykit(["sign", ...controlArgs(c)])
      if (c.error !== undefined) {
        expect(ran.code).toBe(2)
        expect(ran.stderr).toMatch(/^paykit sign: amount: /)
        expect(ran.stdout).toBe("")
      } else {
        expect(ran.stderr).toBe("")
        expect(ran.stdout).toBe(`${c.control}\n`)
        expect(ran.code).toBe(0)
        // explain shows the same digest input (without the key) and control.
        const explained = JSON.parse((await paykit(["explain", ...controlArgs(c), "--json"])).stdout) as { concatenationWithoutKey: string; control: string }
        expect(explained.concatenationWithoutKey + c.merchant_control_key).toBe(c.concatenation)
        expect(explained.control).toBe(c.control)
      }
    })
  }
})

const oauthArgs = (c: OAuthCase): Array<string> => [
  // The vectors sign arbitrary URLs: pick an operation of the right scheme and give --url.
  c.signature_method === "HMAC-SHA1" ? "PAYOUT" : "TRANSFER_V4",
  ...c.params.map(([n, v]) => `${n}=${v}`),
  "--url", c.url,
  `--login=${c.oauth["oauth_consumer_key"]}`,
  `--nonce=${c.oauth["oauth_nonce"]}`,
  `--timestamp=${c.oauth["oauth_timestamp"]}`,
  ...(c.realm === undefined ? [] : [`--realm=${c.realm}`]),
  ...(c.oauth["oauth_token"] === undefined ? [] : [`--oauth-token=${c.oauth["oauth_token"]}`, `--oauth-token-secret=${c.token_secret}`]),
  ...(c.signature_method === "HMAC-SHA1"
    ? [`--key=${c.consumer_secret}`]
    : ["--private-key", `${vectorsDir}keys/${oauth.keys[c.private_key!]!.private_key_file}`])
]

describe("paykit sign agrees with oauth.json", () => {
  for (const c of oauth.cases) {
    it(`${c.id} (${c.signature_method})`, async () => {
      const ran = await paykit(["sign", ...oauthArgs(c)])
      expect(ran.stderr).toBe("")
      expect(ran.stdout).toBe(`${c.authorization_header}\n`)
      expect(ran.code).toBe(0)
      const explained = JSON.parse((await paykit(["explain", ...oauthArgs(c), "--show-card-data", "--json"])).stdout) as {
        baseStringUri: string
        normalizedParameters: string
        baseString: string
      }
      expect(explained.baseStringUri).toBe(c.base_string_uri)
      expect(explained.normalizedParameters).toBe(c.normalized_params)
      expect(explained.baseString).toBe(c.base_string)
    })
  }
})
