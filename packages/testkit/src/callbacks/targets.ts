/**
 * Where the simulator may send server callbacks (`callbackTargets`). A shared sandbox must not be
 * made to call, on someone's behalf, hosts its operator did not mean it to: loopback is allowed,
 * anything else only when an allow entry (a host name, `*.suffix`, an address or a CIDR range)
 * names it, and link-local / metadata addresses only when an address or range inside them is named
 * explicitly (a host name or a wide range such as `0.0.0.0/0` never allows them).
 *
 * A host name is resolved at delivery time and each address it resolves to is checked; the
 * connection then goes to the checked address (never a second lookup a rebinding DNS server could
 * answer differently).
 *
 * @packageDocumentation
 */
import { LOOPBACK, SENSITIVE, cidrWithin, inCidr, parseCidr, parseIp, type Cidr } from "../http/net-address"

/** One address a host name resolves to. */
export interface ResolvedAddress {
  /** The address, as `dns.lookup` writes it (`127.0.0.1`, `::1`). */
  readonly address: string
  /** The IP version of {@link ResolvedAddress.address}. */
  readonly family: 4 | 6
}

/** Resolves a host name to its addresses (default: the system resolver, `dns.lookup` with `all`). */
export type CallbackResolver = (hostname: string) => Promise<ReadonlyArray<ResolvedAddress>>

/** One checked connection to make: the callback URL and the address it must go to. */
export interface CallbackConnection {
  /** The callback URL with its query, as the merchant named it. */
  readonly url: string
  /** The URL's host name (the Host header and TLS server name). */
  readonly hostname: string
  /** The checked address to connect to. */
  readonly address: string
  /** The IP version of {@link CallbackConnection.address}. */
  readonly family: 4 | 6
  /** Aborts the delivery (the simulator's callback timeout, or its close). */
  readonly signal: AbortSignal
}

/** Sends one callback GET to a checked address; resolves to the HTTP status the receiver answered. */
export type CallbackTransport = (connection: CallbackConnection) => Promise<number>

/** A target the policy allowed (with the address to use) or refused (with the reason). */
type TargetVerdict =
  | { readonly ok: true; readonly hostname: string; readonly address: string; readonly family: 4 | 6 }
  | { readonly ok: false; readonly reason: string }

/** A bad `callbackTargets` entry. */
export class CallbackTargetsError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override readonly name = "CallbackTargetsError"
}

const HOST_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

/** The callback-target policy: built once from the allow entries. */
export class CallbackTargets {
  private readonly ranges: Cidr[] = []
  private readonly names = new Set<string>()
  private readonly suffixes: string[] = []

  /** @throws CallbackTargetsError naming an entry that is neither a host name, `*.suffix`, an address nor a CIDR. */
  constructor(allow: ReadonlyArray<string> = []) {
    for (const raw of allow) {
      const entry = raw.trim().toLowerCase().replace(/\.$/, "")
      const range = parseCidr(entry)
      if (range !== undefined) this.ranges.push(range)
      else if (HOST_NAME.test(entry) && !/^[0-9.]+$/.test(entry)) {
        if (entry.startsWith("*.")) this.suffixes.push(entry.slice(1))
        else this.names.add(entry)
      } else {
        throw new CallbackTargetsError(`callbackTargets: ${JSON.stringify(raw)} is neither a host name, *.suffix, an IP address nor a CIDR range`)
      }
    }
  }

  /** Whether the allow list names this host (exactly or by a `*.suffix`). */
  private namesHost(hostname: string): boolean {
    return this.names.has(hostname) || this.suffixes.some((suffix) => hostname.endsWith(suffix))
  }

  /** The verdict on one address of a target (`named`: the allow list names the target's host). */
  checkAddress(address: string, named: boolean): { ok: true } | { ok: false; reason: string } {
    const ip = parseIp(address)
    if (ip === undefined) return { ok: false, reason: `${address} is not an IP address` }
    const sensitive = SENSITIVE.find((s) => inCidr(s.range, ip))
    if (sensitive !== undefined) {
      // Only an entry inside the sensitive block itself allows it: never a name, never 0.0.0.0/0.
      const explicit = this.ranges.some((r) => inCidr(r, ip) && cidrWithin(r, sensitive.range))
      return explicit ? { ok: true } : { ok: false, reason: `${address} is ${sensitive.what}; allowed only when callbackTargets names it (e.g. --callback-allow ${address})` }
    }
    if (LOOPBACK.some((r) => inCidr(r, ip))) return { ok: true }
    if (named || this.ranges.some((r) => inCidr(r, ip))) return { ok: true }
    return { ok: false, reason: `${address} is not loopback and not in callbackTargets (allow it with --callback-allow HOST|CIDR)` }
  }

  /** Checks a callback URL, resolving a host name with `resolve`; the verdict names the address to connect to. */
  async check(url: string, resolve: CallbackResolver): Promise<TargetVerdict> {
    let parsed: URL
    try {
      parsed = new URL(url)
    } catch {
      return { ok: false, reason: "server_callback_url is not a URL" }
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return { ok: false, reason: `${parsed.protocol} URLs are not delivered (http and https only)` }
    // WHATWG URL parsing has already turned 2130706433, 0x7f.1 and the like into dotted IPv4.
    const hostname = parsed.hostname.replace(/^\[|\]$/g, "").toLowerCase().replace(/\.$/, "")
    if (parseIp(hostname) !== undefined) {
      const verdict = this.checkAddress(hostname, false)
      return verdict.ok ? { ok: true, hostname, address: hostname, family: hostname.includes(":") ? 6 : 4 } : verdict
    }
    const named = this.namesHost(hostname)
    let addresses: ReadonlyArray<ResolvedAddress>
    try {
      addresses = await resolve(hostname)
    } catch (error) {
      throw new Error(`DNS: ${hostname} did not resolve (${error instanceof Error ? error.message : String(error)})`.slice(0, 200))
    }
    if (addresses.length === 0) throw new Error(`DNS: ${hostname} resolved to no address`)
    const reasons: string[] = []
    for (const a of addresses) {
      const verdict = this.checkAddress(a.address, named)
      if (verdict.ok) return { ok: true, hostname, address: a.address, family: a.family }
      reasons.push(verdict.reason)
    }
    return { ok: false, reason: `${hostname} resolves to ${reasons.join("; ")}` }
  }
}

/** The system resolver: every address of the name, in the resolver's order. */
const systemResolver: CallbackResolver = async (hostname) => {
  const dns = await import("node:dns")
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true })
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
}

/**
 * The default transport: a GET over node:http(s) whose `lookup` answers the checked address only,
 * so the Host header and TLS server name stay the URL's while the socket goes where the policy
 * said. No redirect is followed (a 3xx is an answer, and a retry).
 */
const pinnedTransport: CallbackTransport = async ({ url, address, family, signal }) => {
  const http = url.startsWith("https:") ? await import("node:https") : await import("node:http")
  return new Promise<number>((resolve, reject) => {
    const request = http.request(url, {
      method: "GET",
      agent: false,
      signal,
      lookup: ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
        if (options.all === true) callback(null, [{ address, family }])
        else callback(null, address, family)
      }) as never
    }, (response) => {
      resolve(response.statusCode ?? 0)
      response.resume()
    })
    request.once("error", reject)
    request.end()
  })
}

/**
 * The simulator's own transport: a URL whose host is an address goes through the runtime's fetch
 * (no lookup happens, so it reaches that address; this works on every runtime the testkit runs
 * on); a host name goes through {@link pinnedTransport}.
 */
const defaultTransport: CallbackTransport = (connection) =>
  connection.address === connection.hostname ? fetchTransport(() => globalThis.fetch)(connection) : pinnedTransport(connection)

/** A transport over a fetch function (an injected `callbackFetch`); redirects are not followed. */
function fetchTransport(fetcher: () => typeof fetch): CallbackTransport {
  return async ({ url, signal }) => {
    const response = await fetcher()(url, { method: "GET", signal, redirect: "manual" })
    await response.body?.cancel().catch(() => undefined)
    return response.status
  }
}

/** How callbacks leave the simulator: the policy (none for a trusted in-process `callbackFetch`), resolver and transport. */
export interface CallbackDelivery {
  readonly policy: CallbackTargets | undefined
  readonly resolve: CallbackResolver
  readonly transport: CallbackTransport
}

/**
 * The delivery of a simulator's options. The policy applies whenever callbacks may reach the
 * network: always, except when only a `callbackFetch` was given (an in-process receiver the caller
 * wrote; give `callbackTargets` too to check its targets as well).
 *
 * @throws CallbackTargetsError for a bad allow entry.
 */
export function callbackDelivery(options: {
  readonly callbackFetch?: typeof fetch | undefined
  readonly callbackTargets?: ReadonlyArray<string> | undefined
  readonly callbackResolver?: CallbackResolver | undefined
  readonly callbackTransport?: CallbackTransport | undefined
}): CallbackDelivery {
  const injected = options.callbackFetch
  const transport = options.callbackTransport ?? (injected === undefined ? defaultTransport : fetchTransport(() => injected))
  const checked = options.callbackTargets !== undefined || options.callbackTransport !== undefined || injected === undefined
  return {
    policy: checked ? new CallbackTargets(options.callbackTargets ?? []) : undefined,
    resolve: options.callbackResolver ?? systemResolver,
    transport
  }
}
