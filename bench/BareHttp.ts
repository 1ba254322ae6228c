import { readFileSync } from "node:fs"
import { createServer } from "node:http"

/** The HTTP floor: node:http answering one fixed JSON document (a real preview) to every request. */
const document = readFileSync(process.env.BENCH_DOCUMENT!)
const headers = { "content-type": "application/json", "content-length": String(document.length) }

createServer((_, response) => {
  response.writeHead(200, headers)
  response.end(document)
}).listen(Number(process.env.PORT), process.env.HOST)
