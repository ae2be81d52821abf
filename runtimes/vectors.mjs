/**
 * The signing vectors on any runtime: every case of control.json, oauth.json and callback.json
 * through @paykit/signing, imported by its published name. Imports nothing but @paykit/signing and
 * web-standard APIs, so it also runs where `node:crypto` does not exist (workerd without
 * `nodejs_compat`), given a signing package that loads there.
 */
import * as signing from "@paykit/signing"

/** A step failed: the message names the step and the case, never a key. */
export class StepError extends Error {}
export const check = (ok, message) => {
  if (!ok) throw new StepError(message)
}
export const describe = (e) => (e instanceof Error ? `${e._tag ? `${e._tag}: ` : ""}${e.message}` : typeof e === "object" && e !== null && "_tag" in e ? `${e._tag} ${JSON.stringify(e)}` : String(e))

/**
 * The signing function to use: `<name>Async` when the package exports it and `preferAsync` is set
 * (the WebCrypto provider's explicit async variants), else `<name>`. Either is awaited, so a
 * synchronous result passes through unchanged.
 */
function pick(name, preferAsync, used) {
  const asyncFn = signing[`${name}Async`]
  if (preferAsync && typeof asyncFn === "function") {
    used.add(`${name}Async`)
    return asyncFn
  }
  const fn = signing[name]
  if (typeof fn !== "function") throw new StepError(`@paykit/signing exports no ${name}`)
  used.add(name)
  return fn
}

function pemBody(pem) {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "")
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))
}

/** RSA-SHA256 verification by WebCrypto, independent of @paykit/signing's own crypto. */
async function webCryptoVerify(publicPem, baseString, signature) {
  const key = await crypto.subtle.importKey("spki", pemBody(publicPem), { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, false, ["verify"])
  return crypto.subtle.verify("RSASSA-PKCS1-v1_5", key, Uint8Array.from(atob(signature), (c) => c.charCodeAt(0)), new TextEncoder().encode(baseString))
}

/**
 * Runs every vector. `vectors` = { control, oauth, callback } (the parsed JSON files) and `keys`
 * (file name → PEM text). Returns counts, the failing ids (first 10) and the functions used.
 */
export async function runVectors(vectors, keys, { preferAsync = false } = {}) {
  const used = new Set()
  const failures = []
  let passed = 0
  const record = async (file, id, fn) => {
    try {
      const message = await fn()
      if (message === undefined) passed++
      else failures.push(`${file} ${id}: ${message}`)
    } catch (e) {
      failures.push(`${file} ${id}: threw ${describe(e)}`)
    }
  }
  const controlDigest = pick("controlDigest", preferAsync, used)
  const verifyControl = pick("verifyControl", preferAsync, used)
  for (const c of vectors.control.cases) {
    await record("control.json", c.id, async () => {
      const fields = vectors.control.fields[c.code]?.values
      if (fields === undefined) return `unknown code ${c.code}`
      // C6's currency is given at top level only (it does not enter the digest); the body carries it
      const values = c.currency === null ? c.values : { ...c.values, currency: c.currency }
      const scheme = { code: c.code, fields }
      // every C4/C5/C6 case names its minor-units mode (docs/decisions.md#2-amounts-in-cents): sign in that mode
      const options = {
        ...(c.values.endpointId === undefined ? {} : { endpointId: c.values.endpointId }),
        ...(c.minor_units === undefined ? {} : { minorUnits: c.minor_units })
      }
      if (c.error !== undefined) {
        try {
          const digest = await controlDigest(scheme, values, c.merchant_control_key, options)
          return `expected ${c.error}, got a digest (${c.minor_units ?? "no"} mode)`
        } catch (e) {
          return c.error === "invalid_amount" && e?._tag === "InvalidAmountError" ? undefined : `expected ${c.error}, got ${describe(e)}`
        }
      }
      const digest = await controlDigest(scheme, values, c.merchant_control_key, options)
      if (digest !== c.control) return `control differs (${c.minor_units ?? "no"} mode)`
      const verified = await verifyControl(scheme, values, c.control.toUpperCase(), c.merchant_control_key, options)
      return verified.ok ? undefined : "verifyControl rejected the upper-case control"
    })
  }

  const signOAuth = pick("signOAuth", preferAsync, used)
  // The WebCrypto provider's key loader is `importPrivateKey` (async), not `loadPrivateKeyAsync`.
  const loadPrivateKey = preferAsync && typeof signing.importPrivateKey === "function"
    ? (used.add("importPrivateKey"), signing.importPrivateKey)
    : pick("loadPrivateKey", preferAsync, used)
  const privateKeys = new Map()
  const loadKey = async (id) => {
    if (!privateKeys.has(id)) {
      const files = vectors.oauth.keys[id]
      if (files === undefined) throw new StepError(`unknown key id ${id}`)
      privateKeys.set(id, { privateKey: await loadPrivateKey(keys[files.private_key_file]), publicPem: keys[files.public_key_file] })
    }
    return privateKeys.get(id)
  }
  const baseStringChecks = (c) => {
    const pairs = [...c.params, ...Object.entries(c.oauth)]
    if (signing.baseStringUri(c.url) !== c.base_string_uri) return "base_string_uri differs"
    if (signing.normalizeParameters([...(c.query_params ?? []), ...pairs]) !== c.normalized_params) return "normalized_params differs"
    if (signing.signatureBaseString(c.method, c.url, pairs) !== c.base_string) return "base_string differs"
    return undefined
  }
  for (const c of vectors.oauth.cases) {
    await record("oauth.json", c.id, async () => {
      const base = baseStringChecks(c)
      if (base !== undefined) return base
      const common = {
        method: c.method,
        url: c.url,
        params: c.params,
        consumerKey: c.oauth.oauth_consumer_key ?? "",
        ...(c.oauth.oauth_token === undefined ? {} : { token: { key: c.oauth.oauth_token, secret: c.token_secret ?? "" } })
      }
      const options = { nonce: c.oauth.oauth_nonce ?? "", timestamp: c.oauth.oauth_timestamp ?? "", ...(c.realm === undefined ? {} : { realm: c.realm }) }
      let key
      let signed
      if (c.signature_method === "RSA-SHA256") {
        key = await loadKey(c.private_key)
        signed = await signOAuth({ ...common, signatureMethod: "RSA-SHA256", privateKey: key.privateKey }, options)
      } else {
        signed = await signOAuth({ ...common, signatureMethod: "HMAC-SHA1", consumerSecret: c.consumer_secret ?? "" }, options)
      }
      if (signed.baseString !== c.base_string) return "signOAuth base_string differs"
      if (signed.signature !== c.signature) return `${c.signature_method} signature differs`
      if (signed.authorizationHeader !== c.authorization_header) return "authorization_header differs"
      if (key !== undefined && !(await webCryptoVerify(key.publicPem, c.base_string, c.signature))) return "RSA signature does not verify (WebCrypto)"
      return undefined
    })
  }
  for (const c of vectors.oauth.base_string_examples ?? []) await record("oauth.json", c.id, async () => baseStringChecks(c))

  const callbackControl = pick("callbackControl", preferAsync, used)
  const verifyCallbackControl = pick("verifyCallbackControl", preferAsync, used)
  for (const c of vectors.callback.cases) {
    await record("callback.json", c.id, async () => {
      if ((await callbackControl(c.values, c.merchant_control_key)) !== c.control) return "control differs"
      const verified = await verifyCallbackControl(c.values, c.control.toUpperCase(), c.merchant_control_key)
      return verified.ok ? undefined : "verifyCallbackControl rejected the upper-case control"
    })
  }
  return { passed, failed: failures.length, failures: failures.slice(0, 3), used: [...used].sort() }
}

