/**
 * IP addresses and CIDR ranges as numbers (IPv4 in 32 bits, IPv6 in 128, as BigInt), for the
 * callback-target policy and the loopback rule of test routes. Written out rather than taken from
 * `net.BlockList` so it behaves the same on every runtime the testkit runs on, and so IPv4-mapped
 * IPv6 addresses (`::ffff:169.254.169.254`) are judged by the IPv4 address they carry.
 *
 * @packageDocumentation
 */

/** An address or range: its family, its first address and its prefix length. */
export interface Cidr {
  readonly family: 4 | 6
  readonly base: bigint
  readonly prefix: number
  /** As written (for messages). */
  readonly text: string
}

function parseV4(text: string): bigint | undefined {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  let value = 0n
  for (const part of parts) {
    if (!/^[0-9]{1,3}$/.test(part) || Number(part) > 255) return undefined
    value = (value << 8n) | BigInt(Number(part))
  }
  return value
}

function parseV6(input: string): bigint | undefined {
  let text = input.startsWith("[") && input.endsWith("]") ? input.slice(1, -1) : input
  const zone = text.indexOf("%")
  if (zone >= 0) text = text.slice(0, zone)
  // A dotted IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = text.lastIndexOf(":")
  if (text.includes(".", lastColon)) {
    const v4 = parseV4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groups = (s: string) => (s === "" ? [] : s.split(":"))
  const head = groups(halves[0]!)
  const tail = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  let value = 0n
  for (const group of [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail]) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined
    value = (value << 16n) | BigInt(parseInt(group, 16))
  }
  return value
}

const MAPPED_PREFIX = 0xffffn << 32n
const NAT64_PREFIX = 0x0064ff9bn << 96n

/**
 * Parses an IP address (IPv4 dotted, IPv6 with or without brackets). An IPv4-mapped
 * (`::ffff:a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address becomes the IPv4 address it
 * carries: a connection to it reaches that IPv4 host.
 */
export function parseIp(text: string): { family: 4 | 6; value: bigint } | undefined {
  const v4 = parseV4(text)
  if (v4 !== undefined) return { family: 4, value: v4 }
  const v6 = parseV6(text)
  if (v6 === undefined) return undefined
  if (v6 >> 32n === MAPPED_PREFIX >> 32n || v6 >> 32n === NAT64_PREFIX >> 32n) return { family: 4, value: v6 & 0xffffffffn }
  return { family: 6, value: v6 }
}

/** Parses `a.b.c.d`, `a.b.c.d/n`, an IPv6 address or `x::/n`; undefined when it is none. */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/")
  const ip = parseIp(slash < 0 ? text : text.slice(0, slash))
  if (ip === undefined) return undefined
  const bits = ip.family === 4 ? 32 : 128
  let prefix = bits
  if (slash >= 0) {
    const p = text.slice(slash + 1)
    if (!/^[0-9]{1,3}$/.test(p)) return undefined
    prefix = Number(p)
    // A mapped IPv6 range (::ffff:0:0/96 and longer) counts in IPv4 bits.
    if (ip.family === 4 && parseV4(text.slice(0, slash)) === undefined) prefix -= 96
    if (prefix < 0 || prefix > bits) return undefined
  }
  const mask = prefix === 0 ? 0n : ((1n << BigInt(prefix)) - 1n) << BigInt(bits - prefix)
  return { family: ip.family, base: ip.value & mask, prefix, text }
}

/** Whether `address` lies in `range`. */
export function inCidr(range: Cidr, address: { family: 4 | 6; value: bigint }): boolean {
  if (range.family !== address.family) return false
  const bits = range.family === 4 ? 32 : 128
  const shift = BigInt(bits - range.prefix)
  return address.value >> shift === range.base >> shift
}

/** Whether `inner` lies wholly inside `outer`. */
export function cidrWithin(inner: Cidr, outer: Cidr): boolean {
  return inner.family === outer.family && inner.prefix >= outer.prefix && inCidr(outer, { family: inner.family, value: inner.base })
}

const cidr = (text: string): Cidr => parseCidr(text)!

/** Loopback: 127.0.0.0/8 and ::1 (mapped forms included). */
export const LOOPBACK: ReadonlyArray<Cidr> = [cidr("127.0.0.0/8"), cidr("::1/128")]

/**
 * Addresses a shared sandbox must never be made to call unless an allow entry names them (an
 * address or a range inside one of these): link-local (where the cloud metadata services live),
 * the metadata services elsewhere, "this host" (0.0.0.0 reaches local services), multicast and
 * broadcast.
 */
export const SENSITIVE: ReadonlyArray<{ readonly range: Cidr; readonly what: string }> = [
  { range: cidr("169.254.0.0/16"), what: "link-local (cloud metadata, e.g. 169.254.169.254)" },
  { range: cidr("fe80::/10"), what: "IPv6 link-local" },
  { range: cidr("100.100.100.200/32"), what: "cloud metadata (Alibaba)" },
  { range: cidr("fd00:ec2::254/128"), what: "cloud metadata (AWS IPv6)" },
  { range: cidr("168.63.129.16/32"), what: "cloud host service (Azure)" },
  { range: cidr("0.0.0.0/8"), what: "\"this host\" (0.0.0.0/8)" },
  { range: cidr("::/128"), what: "unspecified address (::)" },
  { range: cidr("224.0.0.0/4"), what: "multicast" },
  { range: cidr("255.255.255.255/32"), what: "broadcast" },
  { range: cidr("ff00::/8"), what: "IPv6 multicast" }
]

/** Whether an address (text) is loopback. `localhost` counts: it resolves to loopback. */
export function isLoopback(host: string): boolean {
  if (host.toLowerCase() === "localhost") return true
  const ip = parseIp(host)
  return ip !== undefined && LOOPBACK.some((range) => inCidr(range, ip))
}
