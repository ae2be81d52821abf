/**
 * Where the tour runs: the embedded simulator (default), or a real gateway when `PAYKIT_BASE_URL`
 * and credentials are set. Either way the tour talks to it only through `@paykit/client`.
 */
import { createPayClient, type Callback, type PromisePayClient } from "@paykit/client"
import { createSimulator, testMerchant, type Simulator } from "@paykit/testkit"
import { readFileSync } from "node:fs"

/** The merchant's side of the demo: where callbacks and final redirects arrive. */
export const MERCHANT_ORIGIN = "http://merchant.demo.local"

/** What every flow gets. */
export interface DemoEnv {
  readonly pay: PromisePayClient
  /** The embedded simulator; undefined against a real gateway (its clock cannot be moved). */
  readonly simulator: Simulator | undefined
  /** Where the customer's browser requests go (the simulator's pages, the merchant's return page). */
  readonly browserFetch: (request: Request) => Promise<Response>
  /** Verified server callbacks, in arrival order. */
  readonly callbacks: Array<Callback>
  /** Verified final redirects (the customer's browser POSTing back to `redirect_url`). */
  readonly finalRedirects: Array<Callback>
  readonly serverCallbackUrl: string | undefined
  readonly redirectUrl: string
  readonly target: string
  /** Origin of the embedded simulator's links (not resolvable on the network); undefined against a gateway. */
  readonly simulatorOrigin: string | undefined
  close(): Promise<void>
}

/** Against the embedded simulator: everything in-process, no socket. */
export const embedded = (): DemoEnv => {
  const simOrigin = "http://paykit-sim.demo.local"
  let merchant: (request: Request) => Promise<Response> = async () => new Response("not ready", { status: 503 })
  const sim = createSimulator({
    clock: "real",
    processingDelayMs: 150,
    baseUrl: simOrigin,
    // The simulator's callback sender reaches the merchant's handler directly.
    callbackFetch: ((input: RequestInfo | URL, init?: RequestInit) => merchant(new Request(input, init))) as typeof fetch
  })
  const pay = createPayClient({
    baseUrl: simOrigin,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    privateKeyPem: testMerchant.privateKeyPem,
    endpointId: testMerchant.endpointId,
    fetch: sim.fetch,
    retry: { baseDelayMs: 20, maxDelayMs: 200 },
    poll: { fastIntervalMs: 50, fastPhaseMs: 10_000, slowIntervalMs: 500, deadlineMs: 30_000 }
  })
  const env = withMerchant(pay, sim, `${MERCHANT_ORIGIN}/callback`, `simulator (embedded, in-process)`)
  merchant = env.merchantHandler
  return {
    ...env.demo,
    simulatorOrigin: simOrigin,
    browserFetch: (request) => (new URL(request.url).origin === MERCHANT_ORIGIN ? merchant(request) : sim.fetch(request)),
    close: () => sim.close()
  }
}

/** Against a real gateway configured by environment variables. */
export const gateway = (): DemoEnv => {
  const env = process.env
  const need = ["PAYKIT_BASE_URL", "PAYKIT_LOGIN", "PAYKIT_CONTROL_KEY", "PAYKIT_ENDPOINT_ID"].filter((n) => !env[n])
  if (need.length > 0) throw new Error(`set ${need.join(", ")} to run the demo against a gateway`)
  const privateKeyPem = env.PAYKIT_PRIVATE_KEY ?? (env.PAYKIT_PRIVATE_KEY_FILE ? readFileSync(env.PAYKIT_PRIVATE_KEY_FILE, "utf8") : undefined)
  const pay = createPayClient({
    baseUrl: env.PAYKIT_BASE_URL!,
    login: env.PAYKIT_LOGIN!,
    controlKey: env.PAYKIT_CONTROL_KEY!,
    privateKeyPem,
    endpointId: env.PAYKIT_ENDPOINT_ID!,
    endpointGroupId: env.PAYKIT_ENDPOINT_GROUP_ID
  })
  const made = withMerchant(pay, undefined, env.PAYKIT_CALLBACK_URL, `gateway ${env.PAYKIT_BASE_URL}`)
  return { ...made.demo, simulatorOrigin: undefined, browserFetch: (request) => fetch(request), close: async () => {} }
}

const withMerchant = (pay: PromisePayClient, simulator: Simulator | undefined, serverCallbackUrl: string | undefined, target: string) => {
  const callbacks: Array<Callback> = []
  const finalRedirects: Array<Callback> = []
  const onCallback = pay.callbackHandler({ onCallback: (cb) => void callbacks.push(cb) })
  const merchantHandler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    if (url.pathname === "/callback") return onCallback(request)
    if (url.pathname === "/return" && request.method === "POST") {
      // The final redirect carries the same control as a callback: verify before showing anything.
      const fields = new URLSearchParams(await request.text())
      try {
        finalRedirects.push(await pay.verifyCallback(fields))
        return new Response(`<p>Payment ${fields.get("status")}</p>`, { headers: { "content-type": "text/html" } })
      } catch {
        return new Response("forged redirect", { status: 403 })
      }
    }
    return new Response("not found", { status: 404 })
  }
  const demo = {
    pay,
    simulator,
    callbacks,
    finalRedirects,
    serverCallbackUrl,
    redirectUrl: `${MERCHANT_ORIGIN}/return`,
    target
  }
  return { demo, merchantHandler }
}
