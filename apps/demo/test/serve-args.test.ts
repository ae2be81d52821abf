/**
 * `pnpm demo --serve`'s command line: a bad or taken port is one line on stderr (no stack) and an
 * exit code; --port and --help are documented. The demo as a process: demo-process.heavy.test.ts.
 */
import { createServer, type Server } from "node:net"
import { describe, expect, it } from "vitest"
import { demoHelp, parseDemoArgs } from "../src/args"
import { startShop } from "../src/shop/server"

const occupy = () =>
  new Promise<{ server: Server; port: number }>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }))
  })

describe("parseDemoArgs", () => {
  it("reads --serve, --port and --host", () => {
    expect(parseDemoArgs([])).toEqual({ mode: "tour" })
    expect(parseDemoArgs(["--serve"])).toEqual({ mode: "serve", port: 3000, host: "127.0.0.1" })
    expect(parseDemoArgs(["--serve", "--port", "0"])).toEqual({ mode: "serve", port: 0, host: "127.0.0.1" })
    expect(parseDemoArgs(["--serve", "--port=8080", "--host", "0.0.0.0"])).toEqual({ mode: "serve", port: 8080, host: "0.0.0.0" })
    expect(parseDemoArgs(["--help"])).toEqual({ mode: "help" })
  })

  it.each([
    [["--serve", "--port", "abc"], "--port abc: must be an integer from 0 to 65535 (0 picks a free port)"],
    [["--serve", "--port", "65536"], "--port 65536: must be an integer from 0 to 65535 (0 picks a free port)"],
    [["--serve", "--port", "-1"], "--port -1: must be an integer from 0 to 65535 (0 picks a free port)"],
    [["--serve", "--port"], "--port: needs a value"],
    [["--port", "3000"], "--port: only with --serve (the tour opens no port)"],
    [["--serve", "--prot", "3000"], "--prot: not a flag of the demo (see pnpm demo --help)"]
  ])("refuses %j", (argv, message) => {
    expect(() => parseDemoArgs(argv)).toThrow(message)
  })

  it("documents --serve, --port and --host in --help", () => {
    expect(demoHelp).toMatch(/--serve\s+start the demo shop/)
    expect(demoHelp).toMatch(/--port N\s+the shop's port, 0\.\.65535 \(default 3000; 0 picks a free port\)/)
    expect(demoHelp).toMatch(/--host H/)
  })
})

describe("startShop on a taken port", () => {
  it("rejects with EADDRINUSE", async () => {
    const { server, port } = await occupy()
    try {
      await expect(startShop({ port })).rejects.toMatchObject({ code: "EADDRINUSE" })
    } finally {
      server.close()
    }
  })
})
