import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { generateAll, generatedDir } from "../scripts/generator"

describe("src/generated", () => {
  it("is exactly what the generator makes from spec/openapi.yaml now (run pnpm generate)", async () => {
    const files = await generateAll()
    for (const [name, content] of Object.entries(files)) {
      expect(readFileSync(join(generatedDir, name), "utf8"), `src/generated/${name} is stale`).toBe(content)
    }
  })
})
