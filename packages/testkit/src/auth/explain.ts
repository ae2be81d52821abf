/**
 * The simulator's signature explainer (test mode): when it refuses a `control` or an
 * OAuth signature it says how it computed its own: the scheme, the fields in digest (or
 * base-string) order and the amount as it entered. It never names the key, never the digest it
 * expected (a digest of a known input would let anyone forge that one request), and never a field's
 * value beyond the URL's endpoint id and the amount.
 *
 * @packageDocumentation
 */
import { explainControl as controlParts, explainOAuth as baseStringOf, explainOAuthParameters, percentEncode, type MinorUnits } from "@paykit/signing"
import type { OperationId } from "@paykit/contracts"
import type { Fields } from "../http/validation"

const MODE_RULE: Record<MinorUnits, string> = {
  cents: "cents: × 100 for every currency",
  iso4217: "the currency's ISO 4217 exponent"
}

/** How the simulator computed the control of `operationId` for this request (no key, no digest). */
export function explainControl(operationId: OperationId, fields: Fields, endpointId: string, minorUnits: MinorUnits): string {
  const x = controlParts(operationId, fields, { endpointId, minorUnits })
  const names = x.parts.map((p) => {
    if (p.source === "path") return `${p.field} (${endpointId}, from the URL)`
    return p.given === undefined ? `${p.field} (absent: adds nothing)` : p.field
  })
  let amount = ""
  const part = x.parts.find((p) => p.amount !== undefined)
  if (part?.amount !== undefined && part.amount.currency !== undefined) {
    const { currency } = part.amount
    amount = part.amount.ok
      ? `; amount entered as ${part.amount.minor} (${part.given} ${currency} in minor units, ${MODE_RULE[minorUnits]})`
      : `; amount ${part.given} ${currency} cannot be written in minor units (${MODE_RULE[minorUnits]})`
  }
  return ` Test mode explains: the simulator computed ${x.code} = lowercase hex SHA-1 of the UTF-8 concatenation, without separators, of ${names.join(" + ")} + the merchant control key (never shown)${amount}. Check the order, the amount and the key you used.`
}

/** How the simulator built the OAuth base string it verified (parameter names only, no values). */
export function explainOAuth(method: "HMAC-SHA1" | "RSA-SHA256", url: string, pairs: ReadonlyArray<readonly [string, string]>, header: string, amount: string | undefined): string {
  // Only the names of the header's parameters are shown, so a header that does not parse still
  // gives them.
  const oauth = [...header.matchAll(/(oauth_[a-z_]+)\s*=/g)].map((m): readonly [string, string] => [m[1]!, ""])
  let baseUri = "(the request URL)"
  let parameters
  try {
    const x = baseStringOf({ url, body: pairs, oauth })
    baseUri = x.baseStringUri
    parameters = x.parameters
  } catch {
    // an unparsable URL is already refused elsewhere
    parameters = explainOAuthParameters({ body: pairs, oauth })
  }
  const sorted = [...new Set(parameters.map((p) => p.name))]
  const key = method === "HMAC-SHA1" ? "HMAC-SHA1 keyed with the percent-encoded control key + \"&\" (never shown)" : "RSA-SHA256, verified with the merchant's RSA public key"
  return ` Test mode explains: the simulator verified ${key} over the RFC 5849 base string POST&${percentEncode(baseUri)}&<parameters sorted by encoded name, then value: ${sorted.join(", ")}>` +
    `${amount === undefined ? "" : `; amount entered as sent (${amount}), not in minor units`}. Check the URL (no query, no default port), the parameters and the key you signed with.`
}
