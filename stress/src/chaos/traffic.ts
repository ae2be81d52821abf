/**
 * Counts what the client's global fetch (undici) actually saw on the wire, through undici's
 * diagnostics channels: replies by HTTP status and failures by error code. It observes without
 * wrapping fetch, so the client runs with the default global fetch, and it proves that the faults
 * really happened (a chaos run with no faults proves nothing).
 */
import diagnostics_channel from "node:diagnostics_channel"

interface UndiciMessage {
  readonly request?: { readonly origin?: unknown }
  readonly response?: { readonly statusCode?: unknown }
  readonly error?: { readonly code?: unknown; readonly name?: unknown }
}

export interface TrafficCounter {
  readonly byStatus: Record<string, number>
  readonly errors: Record<string, number>
  stop(): void
}

/** Counts requests to `origin` (e.g. `http://127.0.0.1:4010`). */
export function countTraffic(origin: string): TrafficCounter {
  const byStatus: Record<string, number> = {}
  const errors: Record<string, number> = {}
  const mine = (m: UndiciMessage) => String(m.request?.origin ?? "") === origin
  const onHeaders = (message: unknown) => {
    const m = message as UndiciMessage
    if (!mine(m)) return
    const key = String(m.response?.statusCode ?? "?")
    byStatus[key] = (byStatus[key] ?? 0) + 1
  }
  const onError = (message: unknown) => {
    const m = message as UndiciMessage
    if (!mine(m)) return
    const key = String(m.error?.code ?? m.error?.name ?? "error")
    errors[key] = (errors[key] ?? 0) + 1
  }
  diagnostics_channel.subscribe("undici:request:headers", onHeaders)
  diagnostics_channel.subscribe("undici:request:error", onError)
  return {
    byStatus,
    errors,
    stop: () => {
      diagnostics_channel.unsubscribe("undici:request:headers", onHeaders)
      diagnostics_channel.unsubscribe("undici:request:error", onError)
    }
  }
}
