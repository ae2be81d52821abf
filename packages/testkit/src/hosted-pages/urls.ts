/**
 * Links to the simulator's own HTML pages (access-control server and hosted forms).
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine/engine"
import type { Order } from "../state/orders"
import { esc } from "../http/html-escape"

/** The access-control (3DS challenge) page of an order. */
export function acsUrl(engine: Engine, order: Order): string {
  return `${engine.baseUrl}/__sim/acs/${order.orderid}`
}

/**
 * The `html` a pending 3DS status carries (decision 12), as the gateway's status does: a form that
 * sends the customer's browser to the ACS page at once (a GET, so the page shows the challenge).
 */
export function acsRedirectHtml(url: string): string {
  return `<form id="threeds-redirect" method="get" action="${esc(url)}"><noscript><button type="submit">Continue to 3-D Secure</button></noscript></form><script>document.getElementById("threeds-redirect").submit()</script>`
}

/** The hosted payment (or payout) form of an order. */
export function formUrl(engine: Engine, order: Order): string {
  return `${engine.baseUrl}/__sim/form/${order.orderid}`
}
