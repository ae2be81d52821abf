/**
 * `@paykit/cli`: the `paykit` command, also callable from code.
 *
 * - `paykit sign OPERATION_ID name=value... --key K [--endpoint-id N] [--minor-units cents|iso4217]`
 *   prints the control (or the OAuth `Authorization` header, `--private-key FILE` for RSA);
 * - `paykit explain ...` the same with each field's part of the digest or base string;
 * - `paykit verify-callback`, `paykit status`, `paykit trigger`.
 *
 * `run(argv, io)` runs a command line and resolves to its exit code (0 ok, 1 failed, 2 usage);
 * `explainControl` / `explainOAuth` give the explanations as data.
 *
 * @packageDocumentation
 */
export { run, mainHelp } from "./run"
export { ExitCode, processIo, type CliIo, type ExitCodeValue } from "./io"
export { CheckFailed, UsageError } from "./errors"
export { explainControl, type ControlExplanation, type ControlInputs, type ControlPart } from "./control"
export { explainOAuth, type OAuthExplanation, type OAuthInputs, type OAuthParameter, type OAuthTokenInput } from "./oauth"
export { MINOR_UNITS_MODES, type MinorUnitsMode } from "./minor-units"
