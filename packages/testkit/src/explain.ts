/**
 * The simulator's signature explainer (test mode, issue 16): when it refuses a `control` or an
 * OAuth signature it says how it computed its own: the scheme, the fields in digest (or
 * base-string) order and the amount as it entered. It never names the key, never the digest it
 * expected (a digest of a known input would let anyone forge that one request), and never a field's
 * value beyond the URL's endpoint id and the amount.
 *
 * @packageDocumentation
 */
import { controlSchemeOf, toMinorUnits, type MinorUnits } from "@paykit/signing"
import type { OperationId } from "@paykit/contracts"
import type { Fields } from "./validation"

const MODE_RULE: Record<MinorUnits, string> = {
  cents: "cents: × 100 for every currency",
  iso4217: "the currency's ISO 4217 exponent"
}

/** How the simulator computed the control of `operationId` for this request (no key, no digest). */
export function explainControl(operationId: OperationId, fields: Fields, endpointId: string, minorUnits: MinorUnits): string {
  const scheme = controlSchemeOf(operationId)
  const names = scheme.fields.map((field) => {
    if (field === "endpointId") return `endpointId (${endpointId}, from the URL)`
    return fields[field] === undefined ? `${field} (absent: adds nothing)` : field
  })
  let amount = ""
  const given = fields["amount"]
  const currency = fields["currency"]
  if (scheme.fields.includes("amount") && given !== undefined && currency !== undefined) {
    try {
      amount = `; amount entered as ${toMinorUnits(given, currency, { minorUnits })} (${given} ${currency} in minor units, ${MODE_RULE[minorUnits]})`
    } catch {
      amount = `; amount ${given} ${currency} cannot be written in minor units (${MODE_RULE[minorUnits]})`
    }
  }
  return ` Test mode explains: the simulator computed ${scheme.code} = lowercase hex SHA-1 of the UTF-8 concatenation, without separators, of ${names.join(" + ")} + the merchant control key (never shown)${amount}. Check the order, the amount and the key you used.`
}

/** How the simulator built the OAuth base string it verified (parameter names only, no values). */
export function explainOAuth(method: "HMAC-SHA1" | "RSA-SHA256", url: string, pairs: ReadonlyArray<readonly [string, string]>, header: string, amount: string | undefined): string {
  let baseUri = "(the request URL)"
  const names: string[] = []
  try {
    const u = new URL(url)
    const defaultPort = (u.protocol === "http:" && u.port === "80") || (u.protocol === "https:" && u.port === "443")
    baseUri = `${u.protocol}//${u.hostname.toLowerCase()}${u.port === "" || defaultPort ? "" : `:${u.port}`}${u.pathname}`
    for (const name of u.searchParams.keys()) names.push(name)
  } catch {
    // an unparsable URL is already refused elsewhere
  }
  for (const [name] of pairs) names.push(name)
  for (const m of header.matchAll(/(oauth_[a-z_]+)\s*=/g)) if (m[1] !== "oauth_signature") names.push(m[1]!)
  const encode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  const sorted = [...new Set(names)].sort((a, b) => (encode(a) < encode(b) ? -1 : encode(a) > encode(b) ? 1 : 0))
  const key = method === "HMAC-SHA1" ? "HMAC-SHA1 keyed with the percent-encoded control key + \"&\" (never shown)" : "RSA-SHA256, verified with the merchant's RSA public key"
  return ` Test mode explains: the simulator verified ${key} over the RFC 5849 base string POST&${encode(baseUri)}&<parameters sorted by encoded name, then value: ${sorted.join(", ")}>` +
    `${amount === undefined ? "" : `; amount entered as sent (${amount}), not in minor units`}. Check the URL (no query, no default port), the parameters and the key you signed with.`
}
