// TypeDoc options of the root `docs` script: the public API of the five published packages (each
// package's typedoc.json names its entry points) rendered to docs/api/, failing on any exported
// symbol without TSDoc. Reads the built operation table, so run it after `pnpm build` (the `docs`
// script does).
import { OptionDefaults } from "typedoc"
import { operations } from "../packages/contracts/dist/operations.js"

// The 28 operation methods of PayClientService / PromisePayClient come from a key-remapped mapped
// type over the operation table (`[Op in OperationId as Ops[Op]["method"]]`), which cannot carry a
// comment per key (the client has several entry points, so its symbols are named under `index`); they are documented on the mapped type and in the operation table. Every other
// exported symbol and member must have TSDoc.
const methods = Object.values(operations).map((row) => row.method)
const mappedMethods = ["PayClientService", "PromisePayClient"].flatMap((owner) => methods.map((m) => `@paykit/client.index.${owner}.${m}`))

// Options that TypeDoc applies while converting each package (packages mode), and at the root.
const shared = {
  readme: "none",
  // openapi-typescript writes `@description` on every generated wire type member.
  blockTags: [...OptionDefaults.blockTags, "@description"],
  // No links to sources: the repository has no public remote to point them at.
  disableSources: true,
  validation: {
    notDocumented: true,
    invalidLink: true,
    rewrittenLink: true,
    unusedMergeModuleWith: true,
    // Internal helper types (Ops, IdFields, …) referenced by exported ones stay unexported.
    notExported: false
  }
}

/** @type {Partial<import("typedoc").TypeDocOptions>} */
export default {
  ...shared,
  entryPointStrategy: "packages",
  entryPoints: ["../packages/contracts", "../packages/signing", "../packages/client", "../packages/testkit", "../packages/cli"],
  packageOptions: shared,
  name: "PayKit",
  out: "../docs/api",
  intentionallyNotDocumented: mappedMethods,
  treatWarningsAsErrors: true,
  treatValidationWarningsAsErrors: true,
  logLevel: "Info"
}
