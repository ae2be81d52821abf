import { sharedConfig } from "../../vitest.shared"

export default sharedConfig
