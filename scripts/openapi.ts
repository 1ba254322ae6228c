import { OpenApi } from "@effect/platform"
import { writeFileSync } from "node:fs"
import { DeskApi } from "../src/Api.ts"

/** Regenerates the checked-in openapi/openapi.json from the one HttpApi definition (`npm run openapi`). */
export const openApiText = () => `${JSON.stringify(OpenApi.fromApi(DeskApi), null, 2)}\n`

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = new URL("../openapi/openapi.json", import.meta.url)
  writeFileSync(target, openApiText())
  process.stdout.write(`wrote ${target.pathname}\n`)
}
