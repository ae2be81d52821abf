/**
 * The dashboard's routes, served only when the simulator was created with `dashboard: true`:
 *
 * - `GET /__sim/ui`: the page (server-rendered; a small script keeps the request log live).
 * - `GET /__sim/ui/orders`: the orders section alone (the script swaps it in when requests arrive).
 * - `POST /__sim/ui/action` (a form): runs one action through the same test route a script would
 *   call (clock, settle, chargeback, redeliver, fail-callback, decline-next, reset), then sends the
 *   browser back to the page with what happened (303, so a reload never repeats it).
 *
 * An action POSTed from another origin is refused (403): a page elsewhere must not be able to
 * reset or rewrite a sandbox through a developer's browser.
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import { html, seeOther, type SimReply, type SimRequest } from "../http/replies"
import { handleTestRoute } from "../test-routes/routes"
import { isCrossSite } from "../http/edge"
import { dashboardPage, ordersSection } from "./render"

const enabled = new WeakSet<Engine>()

/** Turns the dashboard on for a simulator's engine (`createSimulator({ dashboard: true })`). */
export function enableDashboard(engine: Engine): void {
  enabled.add(engine)
}

/** Handles `/__sim/ui*`; undefined (a 404) for other paths or when the dashboard is off. */
export async function handleDashboard(engine: Engine, request: SimRequest, path: string, query: string): Promise<SimReply | undefined> {
  if (!enabled.has(engine) || !(path === "/__sim/ui" || path.startsWith("/__sim/ui/"))) return undefined
  if (request.method === "GET" && path === "/__sim/ui") {
    const params = new URLSearchParams(query)
    const note = params.get("note")
    return html(dashboardPage(engine, note === null ? undefined : { text: note.slice(0, 300), ok: params.get("ok") !== "0" }))
  }
  if (request.method === "GET" && path === "/__sim/ui/orders") return html(ordersSection(engine))
  if (request.method === "POST" && path === "/__sim/ui/action") {
    if (!sameOrigin(request)) return html("<!doctype html><title>Refused</title><p>Refused: this action came from another site.</p>", 403)
    const form = new URLSearchParams(await request.text())
    const done = await runAction(engine, request, form)
    const anchor = form.get("orderid") === null ? "" : `#order-${encodeURIComponent(form.get("orderid")!)}`
    return seeOther(`/__sim/ui?${new URLSearchParams({ note: done.text, ok: done.ok ? "1" : "0" })}${anchor}`)
  }
  return undefined
}

function sameOrigin(request: SimRequest): boolean {
  let requested: string | null = null
  try {
    requested = new URL(request.url).host
  } catch {
    // an unparsable URL: only the Host header can say where the request went
  }
  return !isCrossSite(request.header("origin"), request.header("host") ?? requested)
}

interface Done {
  readonly text: string
  readonly ok: boolean
}

/** One dashboard action, done by its test route; what to tell the user. */
async function runAction(engine: Engine, request: SimRequest, form: URLSearchParams): Promise<Done> {
  const action = form.get("action") ?? ""
  const orderid = form.get("orderid") ?? ""
  const call = async (method: string, path: string, query = "", body = ""): Promise<{ ok: boolean; body: Record<string, unknown> }> => {
    const inner: SimRequest = { method, url: `${request.url.slice(0, request.url.indexOf("/__sim/"))}${path}${query === "" ? "" : `?${query}`}`, header: () => null, text: async () => body }
    const reply = await handleTestRoute(engine, inner, path, query)
    if (reply === undefined) return { ok: false, body: { error: "no such test route" } }
    let parsed: Record<string, unknown> = {}
    try {
      parsed = JSON.parse(reply.body) as Record<string, unknown>
    } catch {
      // not JSON: reported by status below
    }
    return { ok: reply.status < 300, body: parsed }
  }
  const failed = (r: { body: Record<string, unknown> }): Done => ({ text: typeof r.body["error"] === "string" ? r.body["error"] : "refused", ok: false })
  switch (action) {
    case "advance": {
      const minutes = Number(form.get("minutes") ?? "")
      if (!Number.isFinite(minutes) || minutes <= 0 || minutes > 60 * 24 * 400) return { text: "minutes: enter a number of minutes above 0 (at most 400 days)", ok: false }
      const ms = Math.round(minutes * 60_000)
      const r = await call("POST", "/__sim/clock/advance", `ms=${ms}`)
      return r.ok ? { text: `Clock advanced by ${describeMinutes(minutes)}; now ${new Date(Number(r.body["now"])).toISOString()}`, ok: true } : failed(r)
    }
    case "settle": {
      const r = await call("POST", `/__sim/orders/${encodeURIComponent(orderid)}/settle`)
      return r.ok ? { text: `Order ${orderid} settled`, ok: true } : failed(r)
    }
    case "chargeback": {
      const amount = (form.get("amount") ?? "").trim()
      const r = await call("POST", `/__sim/orders/${encodeURIComponent(orderid)}/chargeback`, "", amount === "" ? "" : JSON.stringify({ amount }))
      return r.ok ? { text: `Order ${orderid} charged back ${String(r.body["amount"])} ${String(r.body["currency"])}`, ok: true } : failed(r)
    }
    case "redeliver": {
      const index = form.get("index") ?? ""
      if (!/^[0-9]{1,9}$/.test(index)) return { text: "index: not a callback attempt", ok: false }
      const r = await call("POST", `/__sim/callbacks/${index}/redeliver`)
      if (!r.ok) return failed(r)
      const outcome = r.body["outcome"]
      return { text: `Callback of order ${String(r.body["orderid"])} sent again (attempt ${String(r.body["attempt"])}): ${outcome === "error" ? `failed, ${String(r.body["error"] ?? "")}` : `answered HTTP ${String(outcome)}`}`, ok: outcome === 200 }
    }
    case "fail-callback": {
      const count = Number(form.get("count") ?? "1")
      if (!Number.isInteger(count) || count < 1 || count > 1000) return { text: "count: enter a whole number from 1 to 1000", ok: false }
      const r = await call("POST", "/__sim/faults", "", JSON.stringify({ kind: "callback-fail", count }))
      return r.ok ? { text: `The next ${count === 1 ? "callback delivery fails" : `${count} callback deliveries fail`} (the simulator retries with backoff)`, ok: true } : failed(r)
    }
    case "decline-next": {
      const r = await call("POST", "/__sim/decline-next")
      return r.ok ? { text: `The next payment will be declined (${String(r.body["pending"])} queued)`, ok: true } : failed(r)
    }
    case "reset": {
      const r = await call("POST", "/__sim/reset")
      return r.ok ? { text: "Simulator reset: every order, callback, fault and card reference is gone", ok: true } : failed(r)
    }
    default:
      return { text: "action: not a dashboard action", ok: false }
  }
}

function describeMinutes(minutes: number): string {
  if (minutes % 1440 === 0) return `${minutes / 1440} day${minutes === 1440 ? "" : "s"}`
  if (minutes % 60 === 0) return `${minutes / 60} hour${minutes === 60 ? "" : "s"}`
  return `${minutes} minute${minutes === 1 ? "" : "s"}`
}
