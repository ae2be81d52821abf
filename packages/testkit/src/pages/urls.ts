/**
 * Links to the simulator's own HTML pages (access-control server and hosted forms).
 *
 * @packageDocumentation
 */
import type { Engine } from "../engine"
import type { Order } from "../state/orders"

/** The access-control (3DS challenge) page of an order. */
export function acsUrl(engine: Engine, order: Order): string {
  return `${engine.baseUrl}/__sim/acs/${order.orderid}`
}

/** The hosted payment (or payout) form of an order. */
export function formUrl(engine: Engine, order: Order): string {
  return `${engine.baseUrl}/__sim/form/${order.orderid}`
}
