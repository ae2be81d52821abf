import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { readFileSync } from "node:fs"
import { Validator } from "@seriousme/openapi-schema-validator"
import Ajv2020 from "ajv/dist/2020.js"
import { parse } from "yaml"
import { describe, expect, it } from "vitest"
import { specPath } from "../scripts/generator"

const run = promisify(execFile)
const spectral = fileURLToPath(new URL("../node_modules/.bin/spectral", import.meta.url))
const ruleset = fileURLToPath(new URL("../../../spec/.spectral.yaml", import.meta.url))

describe("spec/openapi.yaml read by third-party tools", () => {
  it("Spectral (ruleset spectral:oas) reports 0 errors and 0 warnings", async () => {
    // --fail-severity=hint: any finding at all exits non-zero; the JSON lists them for the message.
    const result = await run(spectral, ["lint", specPath, "--ruleset", ruleset, "--format", "json", "--fail-severity", "hint", "--quiet"])
      .then((r) => ({ code: 0, out: r.stdout }))
      .catch((e: { code: number; stdout: string }) => ({ code: e.code, out: e.stdout }))
    const findings = JSON.parse(result.out || "[]") as Array<{ code: string; message: string; path: Array<string> }>
    expect(findings.map((f) => `${f.code}: ${f.message} at ${f.path.join(".")}`)).toEqual([])
    expect(result.code).toBe(0)
  }, 60_000)

  it("is valid by the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator: unknown fields refused, x- only)", async () => {
    const validator = new Validator()
    const result = await validator.validate(specPath)
    expect(validator.version).toBe("3.1")
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  it("every Schema Object is valid by the JSON Schema 2020-12 meta-schema (the OAS 3.1 dialect's base)", () => {
    const spec = parse(readFileSync(specPath, "utf8"))
    const ajv = new Ajv2020({ strict: false })
    const bad: Array<string> = []
    for (const [name, schema] of Object.entries(spec.components.schemas)) {
      if (!ajv.validateSchema(schema as object)) bad.push(`${name}: ${ajv.errorsText(ajv.errors)}`)
    }
    expect(bad).toEqual([])
    expect(ajv.validateSchema({ type: "string", minLength: "one" })).toBe(false)
  })

  it("the OpenAPI validator does fail a broken document (the check can fail)", async () => {
    const validator = new Validator()
    const result = await validator.validate({ openapi: "3.1.0", info: { title: "x" }, paths: { "/a": { post: { responses: { "200": {} } } } } })
    expect(result.valid).toBe(false)
  })
})
