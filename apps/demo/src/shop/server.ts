/**
 * `pnpm demo --serve`: a small merchant shop on localhost. Checkout starts a sale-form; the
 * customer pays on the simulator's hosted page (and its 3-D Secure page); the signed final redirect
 * comes back to /return, which shows the status from `awaitFinal`; callbacks are verified at
 * /callback and listed live at /callbacks.
 */
import { createPayClient, type Callback, type ConfirmedCallback } from "@paykit/client"
import { createSimulator, testMerchant } from "@paykit/testkit"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { callbackRows, callbacksPage, errorPage, productPage, resultPage } from "./pages"

/** A running shop. */
export interface Shop {
  readonly url: string
  readonly simulatorUrl: string
  readonly callbacks: ReadonlyArray<{ at: string; cb: ConfirmedCallback }>
  close(): Promise<void>
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

const toRequest = async (req: IncomingMessage, origin: string): Promise<Request> => {
  const body = req.method === "GET" || req.method === "HEAD" ? undefined : await readBody(req)
  return new Request(new URL(req.url ?? "/", origin), { method: req.method ?? "GET", headers: req.headers as Record<string, string>, ...(body === undefined ? {} : { body }) })
}

const send = async (res: ServerResponse, response: Response): Promise<void> => {
  res.writeHead(response.status, Object.fromEntries(response.headers))
  res.end(Buffer.from(await response.arrayBuffer()))
}

const htmlResponse = (html: string, status = 200) => new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8" } })

/** Starts the simulator (real HTTP, real clock) and the shop in front of it. */
export const startShop = async (options: { port?: number; host?: string } = {}): Promise<Shop> => {
  const host = options.host ?? "127.0.0.1"
  const sim = createSimulator({ clock: "real", processingDelayMs: 400 })
  const simServer = await sim.listen({ port: 0, host })
  const pay = createPayClient({
    baseUrl: simServer.url,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    privateKeyPem: testMerchant.privateKeyPem,
    endpointId: testMerchant.endpointId,
    poll: { fastIntervalMs: 200, fastPhaseMs: 60_000, slowIntervalMs: 1000, deadlineMs: 60_000, stopOnRedirect: false }
  })
  const callbacks: Array<{ at: string; cb: ConfirmedCallback }> = []
  const onCallback = pay.callbackHandler({ onCallback: (cb) => void callbacks.push({ at: new Date().toISOString().slice(11, 19), cb }) })
  let origin = ""
  let counter = 0

  const handle = async (request: Request): Promise<Response> => {
    const url = new URL(request.url)
    if (request.method === "GET" && url.pathname === "/") return htmlResponse(productPage())
    if (request.method === "POST" && url.pathname === "/checkout") {
      const client_orderid = `shop-${Date.now().toString(36)}-${++counter}`
      const form = await pay.saleForm({
        client_orderid, order_desc: "Single-origin beans, 1 kg", amount: "24.90", currency: "EUR",
        first_name: "Demo", last_name: "Customer", address1: "1 Market Street", city: "Berlin", zip_code: "10115",
        country: "DE", phone: "+49 30 1234567", email: "customer@example.com", ipaddress: "127.0.0.1",
        redirect_url: `${origin}/return`, server_callback_url: `${origin}/callback`
      })
      // A reconciled reply (the first send's outcome was unknown) carries the page in its status.
      const location = form.type === "reconciled" ? form.statusReply["redirect-to"] : form["redirect-url"]
      if (location === undefined) return htmlResponse(errorPage("The payment page is not available."), 502)
      return new Response(null, { status: 303, headers: { location } })
    }
    if (request.method === "POST" && url.pathname === "/return") {
      // Trust nothing the browser brings until its control digest verifies; then ask the gateway.
      const fields = new URLSearchParams(await request.text())
      let verified: Callback
      try {
        verified = await pay.verifyCallback(fields)
      } catch {
        return htmlResponse(errorPage("The payment result could not be verified."), 403)
      }
      const final = await pay.awaitFinal({ client_orderid: verified.client_orderid, orderid: verified.orderid })
      const card = final.bin && final["last-four-digits"] ? `${final.bin}******${final["last-four-digits"]}` : undefined
      return htmlResponse(resultPage({ status: final.status, orderid: verified.orderid, client_orderid: verified.client_orderid, amount: final.amount, currency: final.currency, card }))
    }
    if (url.pathname === "/callback") return onCallback(request)
    if (url.pathname === "/callbacks") return htmlResponse(callbacksPage(callbacks))
    if (url.pathname === "/callbacks.json") return Response.json({ rows: callbackRows(callbacks) })
    return htmlResponse(errorPage("Not found."), 404)
  }

  const server = createServer((req, res) => {
    void toRequest(req, origin)
      .then(handle)
      .catch((error: unknown) => {
        const tag = (error as { _tag?: string })._tag ?? "Error"
        return htmlResponse(errorPage(`The payment could not be completed (${tag}).`), 502)
      })
      .then((response) => send(res, response))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 3000, host, resolve))
  origin = `http://${host}:${(server.address() as AddressInfo).port}`
  return {
    url: origin,
    simulatorUrl: simServer.url,
    callbacks,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await simServer.close()
      await sim.close()
    }
  }
}
