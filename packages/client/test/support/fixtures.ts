/** Inputs shared by the tests. */
export const merchant = {
  login: "paykit-test",
  controlKey: "F1C3A5E7-2B4D-4F6A-8C9E-0A1B2C3D4E5F",
  endpointId: 1001
}

let n = 0
/** A fresh client_orderid. */
export const coid = (prefix = "t") => `${prefix}-${Date.now().toString(36)}-${(n++).toString(36)}`

/** A complete sale input (card approved by the simulator unless overridden). */
export function saleInput(overrides: Record<string, string> = {}) {
  return {
    client_orderid: coid("sale"),
    order_desc: "Test order",
    amount: "10.00",
    currency: "USD",
    address1: "1 Main St",
    city: "Springfield",
    zip_code: "12345",
    country: "US",
    state: "IL",
    phone: "5551234567",
    email: "john@example.com",
    ipaddress: "127.0.0.1",
    card_printed_name: "JOHN DOE",
    credit_card_number: "4111111111111111",
    expire_month: "12",
    expire_year: "2030",
    cvv2: "123",
    redirect_url: "https://shop.example.com/return",
    ...overrides
  }
}
