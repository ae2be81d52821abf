/**
 * The `Config` description that reads a client's configuration from the environment, apart from
 * `config.ts` so that resolving a config object loads no `effect/Config`.
 *
 * @packageDocumentation
 */
import { readFileSync } from "node:fs"
import * as Config from "effect/Config"
import * as ConfigError from "effect/ConfigError"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { resolveConfig, type PayClientConfig } from "./config"

/**
 * Reads the configuration from the environment: `PAYKIT_BASE_URL`, `PAYKIT_LOGIN`,
 * `PAYKIT_CONTROL_KEY`, `PAYKIT_PREVIOUS_CONTROL_KEY` (optional: during a key rotation, the key
 * callbacks may still be signed with), `PAYKIT_PRIVATE_KEY` or `PAYKIT_PRIVATE_KEY_FILE` (optional),
 * `PAYKIT_ENDPOINT_ID`, `PAYKIT_ENDPOINT_GROUP_ID` (optional), `PAYKIT_GROUP_PATH_FORM` (optional:
 * `endpoint-id`, the default, or `group-path`), `PAYKIT_MINOR_UNITS` (optional: `cents`, the
 * default, or `iso4217`).
 */
export const payClientConfigFromEnv: Config.Config<PayClientConfig> = Config.all({
  baseUrl: Config.string("PAYKIT_BASE_URL"),
  login: Config.string("PAYKIT_LOGIN"),
  controlKey: Config.redacted("PAYKIT_CONTROL_KEY"),
  previousControlKey: Config.option(Config.redacted("PAYKIT_PREVIOUS_CONTROL_KEY")),
  privateKey: Config.option(Config.redacted("PAYKIT_PRIVATE_KEY")),
  privateKeyFile: Config.option(Config.string("PAYKIT_PRIVATE_KEY_FILE")),
  endpointId: Config.string("PAYKIT_ENDPOINT_ID"),
  endpointGroupId: Config.option(Config.string("PAYKIT_ENDPOINT_GROUP_ID")),
  groupPathForm: Config.literal("endpoint-id", "group-path")("PAYKIT_GROUP_PATH_FORM").pipe(Config.withDefault("endpoint-id" as const)),
  minorUnits: Config.literal("cents", "iso4217")("PAYKIT_MINOR_UNITS").pipe(Config.withDefault("cents" as const))
}).pipe(
  Config.mapOrFail((c) => {
    let privateKeyPem: Redacted.Redacted<string> | undefined
    if (c.privateKey._tag === "Some") privateKeyPem = c.privateKey.value
    else if (c.privateKeyFile._tag === "Some") {
      try {
        privateKeyPem = Redacted.make(readFileSync(c.privateKeyFile.value, "utf8"))
      } catch {
        // The path is not secret; the file content is, and it is never read into the message.
        return Either.left(ConfigError.InvalidData(["PAYKIT_PRIVATE_KEY_FILE"], "cannot read the private key file"))
      }
    }
    return Either.right(resolveConfig({
      baseUrl: c.baseUrl,
      login: c.login,
      controlKey: c.previousControlKey._tag === "Some" ? [c.controlKey, c.previousControlKey.value] : c.controlKey,
      privateKeyPem,
      endpointId: c.endpointId,
      endpointGroupId: c.endpointGroupId._tag === "Some" ? c.endpointGroupId.value : undefined,
      groupPathForm: c.groupPathForm,
      minorUnits: c.minorUnits
    }))
  })
)
