/**
 * The two ways a command ends early. Both carry a message meant for a person: it names the
 * argument or field and the rule it broke, and never holds a key, a card number or a CVV.
 *
 * @packageDocumentation
 */
import { Data } from "./effect-free"

/** A wrong command line or input (exit code 2): names the argument and the rule. */
export class UsageError extends Data.TaggedError("UsageError")<{
  /** The argument, option or field at fault, e.g. `--endpoint-id` or `amount`. */
  readonly argument: string
  /** What the argument must be. */
  readonly rule: string
}> {
  /** `argument: rule`, the text printed after the command's name. */
  override get message(): string {
    return `${this.argument}: ${this.rule}`
  }
}

/** A check failed or the remote side refused or could not be reached (exit code 1). */
export class CheckFailed extends Data.TaggedError("CheckFailed")<{
  /** What failed, for a person. */
  readonly reason: string
  /** Machine-readable details for `--json` (never secrets). */
  readonly details?: Readonly<Record<string, unknown>>
}> {
  /** The reason, as printed. */
  override get message(): string {
    return this.reason
  }
}
