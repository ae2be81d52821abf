/**
 * The demo's command line: `pnpm demo` (the tour) or `pnpm demo --serve [--port N] [--host H]`
 * (the shop). Bad input is a one-line error naming the flag and the rule, never a stack.
 */

/** What the command line asks for. */
export type DemoArgs =
  | { readonly mode: "help" }
  | { readonly mode: "tour" }
  | { readonly mode: "serve"; readonly port: number; readonly host: string }

/** A command-line mistake (exit code 2). */
export class DemoUsageError extends Error {
  readonly _tag = "DemoUsageError" as const
}

/** `pnpm demo --help`. */
export const demoHelp = `Usage: pnpm demo [--serve [--port N] [--host H]] [--help]

Without --serve: the tour of every flow against the embedded simulator (or a gateway, when
PAYKIT_BASE_URL and credentials are set); exits 0 when every flow ends as expected.

  --serve      start the demo shop and a simulator on this machine instead
  --port N     the shop's port, 0..65535 (default 3000; 0 picks a free port)
  --host H     the address to listen on (default 127.0.0.1)
  --help       show this help
`

/** Parses the demo's arguments; throws {@link DemoUsageError} naming the flag and the rule. */
export const parseDemoArgs = (argv: ReadonlyArray<string>): DemoArgs => {
  let serve = false
  let port: number | undefined
  let host: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined]
    const value = (): string => {
      const v = inline ?? argv[++i]
      if (v === undefined || v === "") throw new DemoUsageError(`${flag}: needs a value`)
      return v
    }
    if (flag === "--help" || flag === "-h") return { mode: "help" }
    else if (flag === "--serve") serve = true
    else if (flag === "--port") {
      const text = value()
      const n = Number(text)
      if (!/^[0-9]+$/.test(text) || n > 65535) throw new DemoUsageError(`--port ${text}: must be an integer from 0 to 65535 (0 picks a free port)`)
      port = n
    } else if (flag === "--host") host = value()
    else throw new DemoUsageError(`${arg}: not a flag of the demo (see pnpm demo --help)`)
  }
  if (!serve) {
    if (port !== undefined || host !== undefined) throw new DemoUsageError(`${port !== undefined ? "--port" : "--host"}: only with --serve (the tour opens no port)`)
    return { mode: "tour" }
  }
  return { mode: "serve", port: port ?? 3000, host: host ?? "127.0.0.1" }
}

/** One line for an error from starting the shop's server, or undefined when it is not a listen error. */
export const listenErrorLine = (error: unknown, port: number, host: string): string | undefined => {
  const code = (error as { code?: string }).code
  switch (code) {
    case "EADDRINUSE":
      return `port ${port} on ${host} is already in use: stop what uses it, or pass --port N (--port 0 picks a free port)`
    case "EACCES":
      return `no permission to listen on port ${port} on ${host}: use a port above 1023 with --port N`
    case "EADDRNOTAVAIL":
    case "ENOTFOUND":
      return `cannot listen on ${host}: not an address of this machine (--host)`
    default:
      return undefined
  }
}
