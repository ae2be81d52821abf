/**
 * Prints a sequence of steps as a vitest test case one can paste into a file of this folder
 * (it needs only `replay` from ./runner). A pair carries the order fc.scheduler chose, so the
 * interleaving replays exactly (`fc.schedulerFor`).
 */
import { stepText, type Step } from "./steps"

/** The steps as `it(...)` source. */
export function printTestCase(steps: ReadonlyArray<Step>, problem: string): string {
  const title = problem.split("\n")[0]!.replace(/\\/g, "\\\\").replace(/"/g, '\\"').slice(0, 140)
  const lines = steps.map((step) => `      ${stepText(step)}`)
  return [
    `// import { it } from "vitest"; import { replay } from "./runner"`,
    `it("model: ${title}", async () => {`,
    `  await replay(`,
    `    [`,
    lines.join(",\n"),
    `    ]`,
    `  )`,
    `})`
  ].join("\n")
}
