import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** Folder of the copied shared vectors. */
export const VECTORS_DIR = fileURLToPath(new URL("./vectors/", import.meta.url))

export function readVector<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./vectors/${name}`, import.meta.url), "utf8")) as T
}

export function readKey(name: string): string {
  return readFileSync(new URL(`./vectors/keys/${name}`, import.meta.url), "utf8")
}

export type Pair = [string, string]

export interface ControlCase {
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

export interface ControlVectors {
  fields: Record<string, { operations: Array<string>; values: Array<string> }>
  currency_exponents: Record<string, number>
  minor_units_modes: Record<string, { default: boolean; rule: string }>
  amount_pattern: string
  cases: Array<ControlCase>
}

export interface OAuthCase {
  id: string
  general_rfc5849?: boolean
  signature_method: "HMAC-SHA1" | "RSA-SHA256"
  method: string
  url: string
  params: Array<Pair>
  query_params: Array<Pair>
  oauth: Record<string, string>
  realm?: string
  consumer_secret?: string
  private_key?: "rsa2048" | "rsa4096" | "rsa2048_pkcs1"
  token_secret: string
  base_string_uri: string
  normalized_params: string
  base_string: string
  signature: string
  authorization_header: string
}

export interface OAuthVectors {
  keys: Record<string, { private_key_file: string; public_key_file: string }>
  cases: Array<OAuthCase>
  base_string_examples: Array<Omit<OAuthCase, "signature" | "authorization_header" | "signature_method">>
}

export interface CallbackCase {
  id: string
  values: { status: string; orderid: string; client_orderid: string }
  merchant_control_key: string
  concatenation: string
  control: string
}

export const controlVectors = readVector<ControlVectors>("control.json")
export const oauthVectors = readVector<OAuthVectors>("oauth.json")
export const callbackVectors = readVector<{ cases: Array<CallbackCase> }>("callback.json")
