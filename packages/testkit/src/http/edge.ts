/**
 * The simulator's edge rules, apart from any socket: request limits, and who may use the test
 * routes and the dashboard (docs/decisions.md#simulator-process; a shared sandbox must not be resettable
 * by anyone who can reach it).
 *
 * @packageDocumentation
 */
import { createHash, timingSafeEqual } from "node:crypto"

/** Limits of the HTTP server `listen()` starts. */
export interface RequestLimits {
  /** Largest request body in bytes; a larger one is answered 413 before it is read. Default 65,536 (64 KB). */
  readonly bodyBytes?: number
  /** Time for a client to send the request headers. Default 10,000 ms. */
  readonly headersTimeoutMs?: number
  /** Time for a client to send the whole request, body included. Default 30,000 ms. */
  readonly requestTimeoutMs?: number
  /** Time an idle keep-alive connection stays open. Default 5,000 ms. */
  readonly keepAliveTimeoutMs?: number
}

/** The limits in force when none are given. */
export const DEFAULT_LIMITS: Required<RequestLimits> = {
  bodyBytes: 64 * 1024,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000
}

/** A limit that breaks its rule. */
export class RequestLimitsError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override readonly name = "RequestLimitsError"
}

/**
 * The limits with defaults filled in.
 *
 * @throws RequestLimitsError naming the limit that is not a positive integer, or a header timeout
 * longer than the request timeout.
 */
export function resolveLimits(limits: RequestLimits = {}): Required<RequestLimits> {
  const out = { ...DEFAULT_LIMITS }
  for (const name of Object.keys(DEFAULT_LIMITS) as Array<keyof RequestLimits>) {
    const value = limits[name]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 1) throw new RequestLimitsError(`limits.${name}: must be a positive integer, got ${String(value)}`)
    out[name] = value
  }
  if (out.headersTimeoutMs > out.requestTimeoutMs) {
    throw new RequestLimitsError(`limits.headersTimeoutMs: must not exceed requestTimeoutMs (${out.headersTimeoutMs} > ${out.requestTimeoutMs})`)
  }
  return out
}

/** Who may use the test routes and the dashboard over HTTP. */
export interface TestRouteAccess {
  /** Serve them on any address without a token (`paykit-sim --expose-test-routes`). */
  readonly expose?: boolean
  /** Serve them only to `Authorization: Bearer <adminToken>`, on any address (shared mode). */
  readonly adminToken?: string
}

/**
 * Whether a path is a test route or the dashboard: everything under `/__sim/` except the hosted
 * payment form and 3DS pages, which a customer's browser reaches through `redirect-url`.
 */
export function isTestRoutePath(path: string): boolean {
  return path.startsWith("/__sim/") && !path.startsWith("/__sim/acs/") && !path.startsWith("/__sim/form/")
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

/** Compares a presented token with the admin token in time independent of where they differ. */
export function tokenMatches(presented: string, expected: string): boolean {
  // Hashing first makes both sides the same length, so the length does not leak either.
  return timingSafeEqual(digest(presented), digest(expected)) && expected.length > 0
}

/** A refusal of the gate: the status and a message naming what is missing. */
export interface GateRefusal {
  readonly status: 403 | 404
  readonly error: string
}

/**
 * The gate in front of the test routes: undefined when the request may pass.
 *
 * - with an admin token: only `Authorization: Bearer <token>` passes (403 otherwise), on any address;
 * - with `expose`: everyone passes;
 * - otherwise: only a server listening on loopback serves them (404 elsewhere).
 */
export function testRouteGate(access: TestRouteAccess | undefined, listensOnLoopback: boolean, authorization: string | null): GateRefusal | undefined {
  const token = access?.adminToken
  if (token !== undefined) {
    const match = authorization === null ? null : /^Bearer[ ]+(\S+)\s*$/i.exec(authorization)
    if (match !== null && tokenMatches(match[1]!, token)) return undefined
    return { status: 403, error: "test routes and the dashboard need Authorization: Bearer <admin token> (paykit-sim --shared printed it, or --admin-token set it)" }
  }
  if (access?.expose === true || listensOnLoopback) return undefined
  return { status: 404, error: "test routes are served only when the simulator listens on loopback (start it with --expose-test-routes, or --shared and an admin token)" }
}

/**
 * Whether a request comes from a page of another site: its `Origin` names a host other than the one
 * it was sent to. Browsers send `Origin` on every cross-site POST, including the "simple" ones that
 * need no CORS preflight; curl, the CLI and test code send none. A test route can reset and rewrite
 * the sandbox, so a page open in a developer's browser must not be able to drive it.
 */
export function isCrossSite(origin: string | null, host: string | null): boolean {
  if (origin === null) return false
  if (origin === "null" || host === null) return true
  try {
    return new URL(origin).host.toLowerCase() !== host.toLowerCase()
  } catch {
    return true
  }
}

/**
 * Whether a Host header names this machine's loopback (`localhost`, `127.x.y.z`, `[::1]`, with any
 * port). On loopback without a token, test routes answer only such hosts: a site whose DNS name is
 * rebound to 127.0.0.1 sends its own name as Host (and as Origin), which the same-origin check alone
 * would let through.
 */
export function isLoopbackHost(host: string | null): boolean {
  if (host === null) return false
  const name = host.toLowerCase().replace(/:[0-9]+$/, "")
  return name === "localhost" || name.endsWith(".localhost") || /^127(\.[0-9]{1,3}){3}$/.test(name) || name === "[::1]"
}
