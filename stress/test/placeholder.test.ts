import { it } from "vitest"
it.todo("stress suites")
