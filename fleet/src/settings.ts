/**
 * Timings of the fleet run, shared by the run and its workers. Leases are short so a killed worker's
 * work comes back within seconds, yet each stays above what it protects: an intent's lease above a
 * call's deadline, a job's lease above its heartbeat, a callback's lease above one handler run.
 */
export const SETTINGS = {
  /** Per-attempt HTTP timeout of the workers' client; also its processing window (settleMs). */
  timeoutMs: 2_500,
  /** A money-moving call's overall deadline. */
  deadlineMs: 5_000,
  /** How long a call holds its intent (above deadlineMs). */
  intentLeaseMs: 7_000,
  /** How often each worker runs `recover()` after its start. */
  recoverEveryMs: 2_000,
  /**
   * How long a callback claim holds (a killed handler's callback is claimable again after it). Well
   * above the slowest handler run, status confirmation included, on a loaded machine: a lease that
   * runs out under a live handler lets a redelivery run it a second time.
   */
  callbackLeaseMs: 20_000,
  /**
   * How long a worker's `recover()` at start holds each intent it claims (above a call's deadline):
   * an intent it could not settle waits this long for the next claimer, the final recover() included.
   */
  recoverLeaseMs: 10_000,
  /** How long a worker holds a job without a heartbeat. */
  jobLeaseMs: 8_000,
  heartbeatMs: 2_000,
  /** Payments one worker runs at once. */
  concurrency: 8,
  /** Connections per worker: the store's pool and the merchant tables' pool. */
  storePoolMax: 8,
  fleetPoolMax: 4,
  /** The simulator's processing delay (simulator clock). */
  processingDelayMs: 50,
  /**
   * Runs of a job whose call answered `OutcomeUnknown` before the job gives up on it and leaves the
   * key for a person (`unknown left` in the verdict line): the protocol may answer unknown for good
   * (an order the gateway forgot long after the send), and a queue retrying it forever never ends.
   */
  maxUnknowns: 6,
  /**
   * While payments run, the run moves the simulator's clock (on top of real time) by `clockStepMs`
   * at most every `clockEveryMs`, so callback retries (10 s, 20 s, ... on its clock) fall due: its
   * clock runs up to `1 + clockStepMs / clockEveryMs` times as fast as real time.
   */
  clockStepMs: 10_000,
  clockEveryMs: 2_000
} as const

/**
 * How many times faster than real time the simulator's clock may run while payments run. Retention
 * by age is on the simulator's clock, and the workers' `notFoundProvesWithinMs` on theirs (real
 * time): the run tells the simulator an age this many times the real time it must keep an order.
 */
export const SIM_CLOCK_MAX_RATE = 1 + SETTINGS.clockStepMs / SETTINGS.clockEveryMs

/** The simulator's test cards the plan's `card` stands for. */
export const CARDS = { approve: "4111111111111111", decline: "4000000000000002" } as const
