import { replaySequence } from "./protocol-model"
const [store, config, steps] = JSON.parse(process.argv[2]!)
const r = await replaySequence(store, config, steps).then((w) => "PASSED\n" + w.book.log.join("\n"), (e: Error) => e.message)
console.log(r)
process.exit(0)
