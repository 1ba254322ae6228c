// `npm start`: the desk from its bundle (built on the first start and after a source changed).
import { pathToFileURL } from "node:url"
import { freshBundle } from "./bundle.mjs"

const { built, file, seconds } = await freshBundle()
if (built) process.stderr.write(`handoff-desk: built ${file} in ${seconds.toFixed(1)} s\n`)
await import(pathToFileURL(file).href)
