/**
 * Vector runner: checks control.json, oauth.json and callback.json (the shared vector format, see
 * test/vectors/README.md) in DIR against this package, keys from DIR/keys/.
 *
 *   pnpm --filter @paykit/signing vectors DIR
 *
 * Prints `N passed, M failed` and each failing case's id; exits 1 on any failure. Messages name
 * the mismatching field only, never a key or value.
 */
import { verify as rsaVerify } from "node:crypto"
import { readFile } from "node:fs/promises"
import { isAbsolute, join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import {
  baseStringUri,
  callbackControl,
  controlDigest,
  InvalidAmountError,
  loadPrivateKey,
  loadPublicKey,
  normalizeParameters,
  signatureBaseString,
  signOAuth,
  verifyCallbackControl,
  verifyControl,
  type MinorUnits,
  type ParamPair,
  type RsaPrivateKey,
  type RsaPublicKey
} from "../src/index"

/** One failed case. */
export interface VectorFailure {
  readonly file: string
  readonly id: string
  readonly message: string
}

/** Outcome of a run. */
export interface VectorReport {
  readonly passed: number
  readonly failed: number
  readonly failures: ReadonlyArray<VectorFailure>
}

interface ControlCase {
  id: string
  code: string
  values: Record<string, string>
  currency: string | null
  minor_units?: string
  merchant_control_key: string
  control?: string
  error?: string
}

interface ControlFile {
  fields: Record<string, { values: Array<string> }>
  cases: Array<ControlCase>
}

interface OAuthCase {
  id: string
  signature_method?: "HMAC-SHA1" | "RSA-SHA256"
  method: string
  url: string
  params: Array<ParamPair>
  query_params?: Array<ParamPair>
  oauth: Record<string, string>
  realm?: string
  consumer_secret?: string
  private_key?: string
  token_secret?: string
  base_string_uri: string
  normalized_params: string
  base_string: string
  signature?: string
  authorization_header?: string
}

interface OAuthFile {
  keys: Record<string, { private_key_file: string; public_key_file: string }>
  cases: Array<OAuthCase>
  base_string_examples?: Array<OAuthCase>
}

interface CallbackCase {
  id: string
  values: { status: string; orderid: string; client_orderid: string }
  merchant_control_key: string
  control: string
}

async function readJson<T>(dir: string, name: string): Promise<T> {
  return JSON.parse(await readFile(join(dir, name), "utf8")) as T
}

function describe(error: unknown): string {
  if (error instanceof Error) return "_tag" in error ? `${String(error._tag)}: ${error.message}` : error.message
  return String(error)
}

const AMOUNT_CODES: ReadonlySet<string> = new Set(["C4", "C5", "C6"])

/**
 * The mode a case names. The vectors' README: every C4/C5/C6 case names one and no other case
 * does, and a runner must never guess it, so a case breaking that is a failure, not a default.
 */
function caseMode(c: ControlCase): { readonly mode: MinorUnits } | { readonly problem: string } {
  if (!AMOUNT_CODES.has(c.code)) return c.minor_units === undefined ? { mode: "cents" } : { problem: `minor_units on a ${c.code} case` }
  if (c.minor_units === "cents" || c.minor_units === "iso4217") return { mode: c.minor_units }
  return { problem: c.minor_units === undefined ? "no minor_units on an amount case" : `unknown minor_units ${JSON.stringify(c.minor_units)}` }
}

function checkControlCase(file: ControlFile, c: ControlCase): string | undefined {
  const fields = file.fields[c.code]?.values
  if (fields === undefined) return `unknown code ${c.code}`
  const named = caseMode(c)
  if ("problem" in named) return named.problem
  const minorUnits = named.mode
  // The shared format gives C6's currency at top level only; the body carries it in practice.
  const values = c.currency === null ? c.values : { ...c.values, currency: c.currency }
  const scheme = { code: c.code, fields }
  const options = c.values["endpointId"] === undefined ? { minorUnits } : { endpointId: c.values["endpointId"], minorUnits }
  if (c.error !== undefined) {
    try {
      controlDigest(scheme, values, c.merchant_control_key, options)
      return `expected ${c.error}, got a digest`
    } catch (error) {
      return c.error === "invalid_amount" && error instanceof InvalidAmountError ? undefined : `expected ${c.error}, got ${describe(error)}`
    }
  }
  const digest = controlDigest(scheme, values, c.merchant_control_key, options)
  if (digest !== c.control) return "control differs"
  if (!verifyControl(scheme, values, (c.control as string).toUpperCase(), c.merchant_control_key, options).ok) return "verify rejected the upper-case control"
  return undefined
}

function checkBaseString(c: OAuthCase): string | undefined {
  const pairs: Array<ParamPair> = [...c.params, ...Object.entries(c.oauth)]
  if (baseStringUri(c.url) !== c.base_string_uri) return "base_string_uri differs"
  if (normalizeParameters([...(c.query_params ?? []), ...pairs]) !== c.normalized_params) return "normalized_params differs"
  if (signatureBaseString(c.method, c.url, pairs) !== c.base_string) return "base_string differs"
  return undefined
}

function checkOAuthCase(c: OAuthCase, keys: Map<string, { privateKey: RsaPrivateKey; publicKey: RsaPublicKey }>): string | undefined {
  const fromBase = checkBaseString(c)
  if (fromBase !== undefined) return fromBase
  const oauth = c.oauth
  const common = {
    method: c.method,
    url: c.url,
    params: c.params,
    consumerKey: oauth["oauth_consumer_key"] ?? "",
    ...(oauth["oauth_token"] === undefined ? {} : { token: { key: oauth["oauth_token"], secret: c.token_secret ?? "" } })
  }
  const options = {
    nonce: oauth["oauth_nonce"] ?? "",
    timestamp: oauth["oauth_timestamp"] ?? "",
    ...(c.realm === undefined ? {} : { realm: c.realm })
  }
  let key: { privateKey: RsaPrivateKey; publicKey: RsaPublicKey } | undefined
  let signed
  if (c.signature_method === "RSA-SHA256") {
    key = keys.get(c.private_key ?? "")
    if (key === undefined) return `unknown key id ${String(c.private_key)}`
    signed = signOAuth({ ...common, signatureMethod: "RSA-SHA256", privateKey: key.privateKey }, options)
  } else {
    signed = signOAuth({ ...common, signatureMethod: "HMAC-SHA1", consumerSecret: c.consumer_secret ?? "" }, options)
  }
  if (signed.baseStringUri !== c.base_string_uri) return "signOAuth base_string_uri differs"
  if (signed.normalizedParameters !== c.normalized_params) return "signOAuth normalized_params differs"
  if (signed.baseString !== c.base_string) return "signOAuth base_string differs"
  if (signed.signature !== c.signature) return "signature differs"
  if (signed.authorizationHeader !== c.authorization_header) return "authorization_header differs"
  if (key !== undefined) {
    const ok = verifySignature(c.base_string, key.publicKey, c.signature ?? "")
    if (!ok) return "RSA signature does not verify with the public key"
  }
  return undefined
}

function verifySignature(baseString: string, publicKey: RsaPublicKey, signature: string): boolean {
  return rsaVerify("sha256", Buffer.from(baseString, "utf8"), publicKey.keyObject, Buffer.from(signature, "base64"))
}

function checkCallbackCase(c: CallbackCase): string | undefined {
  if (callbackControl(c.values, c.merchant_control_key) !== c.control) return "control differs"
  if (!verifyCallbackControl(c.values, c.control.toUpperCase(), c.merchant_control_key).ok) return "verify rejected the upper-case control"
  return undefined
}

/** Runs every case of the three files in `dir`; never throws for a failing case. */
export async function runVectors(dir: string): Promise<VectorReport> {
  const failures: Array<VectorFailure> = []
  let passed = 0
  const record = (file: string, id: string, check: () => string | undefined): void => {
    let message: string | undefined
    try {
      message = check()
    } catch (error) {
      message = `threw ${describe(error)}`
    }
    if (message === undefined) passed++
    else failures.push({ file, id, message })
  }

  const control = await readJson<ControlFile>(dir, "control.json")
  for (const c of control.cases) record("control.json", c.id, () => checkControlCase(control, c))

  const oauth = await readJson<OAuthFile>(dir, "oauth.json")
  const keys = new Map<string, { privateKey: RsaPrivateKey; publicKey: RsaPublicKey }>()
  for (const [id, files] of Object.entries(oauth.keys)) {
    keys.set(id, {
      privateKey: loadPrivateKey(await readFile(join(dir, "keys", files.private_key_file), "utf8")),
      publicKey: loadPublicKey(await readFile(join(dir, "keys", files.public_key_file), "utf8"))
    })
  }
  for (const c of oauth.cases) record("oauth.json", c.id, () => checkOAuthCase(c, keys))
  for (const c of oauth.base_string_examples ?? []) record("oauth.json", c.id, () => checkBaseString(c))

  const callback = await readJson<{ cases: Array<CallbackCase> }>(dir, "callback.json")
  for (const c of callback.cases) record("callback.json", c.id, () => checkCallbackCase(c))

  return { passed, failed: failures.length, failures }
}

async function main(): Promise<void> {
  const arg = process.argv[2]
  if (arg === undefined) {
    console.error("usage: vectors DIR  (a folder with control.json, oauth.json, callback.json and keys/)")
    process.exit(2)
  }
  // pnpm --filter runs scripts in the package folder; resolve against where the user typed it.
  const base = process.env["INIT_CWD"] ?? process.cwd()
  const dir = isAbsolute(arg) ? arg : resolve(base, arg)
  const report = await runVectors(dir)
  for (const f of report.failures) console.log(`FAIL ${f.file} ${f.id}: ${f.message}`)
  console.log(`${report.passed} passed, ${report.failed} failed`)
  process.exitCode = report.failed === 0 ? 0 : 1
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(describe(error))
    process.exit(2)
  })
}
