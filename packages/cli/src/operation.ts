/**
 * Finds an operation of the operation table by the name a person types: the interface's id
 * (`SALE`, `payout_v4_check`) or the client method (`saleForm`), in any letter case.
 *
 * @packageDocumentation
 */
import { operationIds, operations, type OperationId } from "@paykit/contracts/operations"
import { UsageError } from "./errors"

/** The operation named `name`; a {@link UsageError} listing the valid names otherwise. */
export function findOperation(name: string | undefined): OperationId {
  if (name === undefined || name === "") {
    throw new UsageError({ argument: "OPERATION_ID", rule: `missing; one of ${operationIds.join(", ")}` })
  }
  const wanted = name.toUpperCase().replace(/-/g, "_")
  for (const id of operationIds) {
    if (id === wanted || operations[id].method.toUpperCase() === name.toUpperCase()) return id
  }
  throw new UsageError({ argument: "OPERATION_ID", rule: `"${name}" is not an operation; one of ${operationIds.join(", ")}` })
}

/** The request URL of an operation: `--url` as given, else the base URL plus the operation's path. */
export function operationUrl(operationId: OperationId, options: { readonly url?: string | undefined; readonly baseUrl?: string | undefined; readonly endpointId?: string | undefined }): string {
  if (options.url !== undefined) return options.url
  if (options.baseUrl === undefined) {
    throw new UsageError({ argument: "--base-url", rule: `${operationId} is OAuth-signed and its base string includes the request URL; give --base-url URL (with --endpoint-id N) or --url URL` })
  }
  if (options.endpointId === undefined) {
    throw new UsageError({ argument: "--endpoint-id", rule: `the URL of ${operationId} (${operations[operationId].path}) needs the endpoint id; give --endpoint-id N` })
  }
  return options.baseUrl.replace(/\/+$/, "") + operations[operationId].path.replace("{endpointId}", encodeURIComponent(options.endpointId))
}
