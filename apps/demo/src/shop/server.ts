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
import { outcomeOf } from "./outcome"
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

/**
 * Starts the simulator (real HTTP, real clock) and the shop in front of it. Rejects with the
 * listen error (`EADDRINUSE`, `EACCES`, ...) when the port cannot be had, after stopping the simulator.
 */
export const startShop = async (options: { port?: number; host?: string; awaitDeadlineMs?: number } = {}): Promise<Shop> => {
  const host = options.host ?? "127.0.0.1"
  // The shop's own address receives the callbacks: allowed even when it is not loopback (--host).
  const sim = createSimulator({ clock: "real", processingDelayMs: 400, callbackTargets: [host] })
  const simServer = await sim.listen({ port: 0, host })
  const pay = createPayClient({
    baseUrl: simServer.url,
    login: testMerchant.login,
    controlKey: testMerchant.controlKey,
    privateKeyPem: testMerchant.privateKeyPem,
    endpointId: testMerchant.endpointId,
    // A customer waits on this page: after 20 s it says "pending" with a link to check again.
    poll: { fastIntervalMs: 200, fastPhaseMs: 20_000, slowIntervalMs: 1000, deadlineMs: options.awaitDeadlineMs ?? 20_000, stopOnRedirect: false }
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
      const ids = { client_orderid: verified.client_orderid, orderid: verified.orderid }
      try {
        return htmlResponse(resultPage(outcomeOf(ids, await pay.awaitFinal(ids))))
      } catch (error) {
        // Past the deadline the order is still open: say so and let the customer check again.
        if ((error as { _tag?: string })._tag !== "AwaitFinalTimeout") throw error
        return htmlResponse(resultPage(outcomeOf(ids, { status: "processing" })))
      }
    }
    if (request.method === "GET" && url.pathname === "/order") {
      // "Check again" on a pending result: one status query, the same page.
      const client_orderid = url.searchParams.get("client_orderid") ?? ""
      const orderid = url.searchParams.get("orderid") ?? ""
      if (client_orderid === "" || orderid === "") return htmlResponse(errorPage("Which order? The link lacks client_orderid or orderid."), 400)
      const reply = await pay.status({ client_orderid, orderid })
      return htmlResponse(resultPage(outcomeOf({ client_orderid, orderid }, reply)))
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
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject)
      server.listen(options.port ?? 3000, host, () => {
        server.off("error", reject)
        resolve()
      })
    })
  } catch (error) {
    // The port is taken (or not ours to take): stop the simulator started for this shop, then report.
    await simServer.close()
    await sim.close()
    throw error
  }
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
