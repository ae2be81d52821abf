/**
 * The merchants of the hostile-traffic run: two well-behaved shops, one that floods, one whose
 * sales name callback targets a shared sandbox must refuse. Shared by the driver and the server.
 */
import type { MerchantConfig, RateLimit } from "@paykit/testkit"

export const GOOD_A = { login: "good-a", controlKey: "GOOD-A-KEY-0001", endpointIds: [3001] } satisfies MerchantConfig
export const GOOD_B = { login: "good-b", controlKey: "GOOD-B-KEY-0002", endpointIds: [3002] } satisfies MerchantConfig
export const FLOODER = { login: "flooder", controlKey: "FLOODER-KEY-0003", endpointIds: [3003] } satisfies MerchantConfig
export const PROBER = { login: "prober", controlKey: "PROBER-KEY-0004", endpointIds: [3004] } satisfies MerchantConfig
export const MERCHANTS: MerchantConfig[] = [GOOD_A, GOOD_B, FLOODER, PROBER]

/** The sandbox's fair-use limit per merchant: twice what a good shop sends here (25/s by default), far below what the flooder tries. */
export const RATE: RateLimit = { requestsPerSecond: 50, burst: 50 }

/** Callback targets a shared sandbox must never call: metadata services, link-local, private ranges. */
export const REFUSED_TARGETS = [
  "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
  "http://[fd00:ec2::254]/latest/meta-data/",
  "http://100.100.100.200/latest/meta-data/",
  "http://[::ffff:169.254.169.254]/",
  "http://10.0.0.1:8080/internal",
  "http://0.0.0.0:22/"
]
