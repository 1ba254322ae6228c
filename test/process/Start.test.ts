import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { startDesk, tempDataDir } from "../support/Process.ts"

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url, { headers: { accept: "application/json" } })
    return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() }
  })

describe("the desk as npm start runs it (the bundle)", () => {
  it.scopedLive(
    "serves the API, the discovery documents and the OpenAPI document, and stops cleanly on SIGTERM",
    () =>
      Effect.gen(function*() {
        const dataDir = yield* tempDataDir
        // Builds .build/desk/main.mjs first when it is older than the sources, as `npm start` does.
        const desk = yield* startDesk({
          command: "start",
          env: { DESK_DATA_DIR: dataDir },
          startTimeout: "180 seconds"
        })

        const discover = yield* get(`${desk.url}/api/discover?q=deadlock`)
        expect(discover.status).toBe(200)
        expect(JSON.parse(discover.text)).toMatchObject({ name: "Handoff Desk", items: expect.any(Array) })
        // Read from static/ relative to the bundle's own location.
        const llms = yield* get(`${desk.url}/llms.txt`)
        expect(llms.status).toBe(200)
        expect(llms.text).toContain("/api/discover")
        const openapi = yield* get(`${desk.url}/openapi.json`)
        expect(openapi.status).toBe(200)
        expect(Object.keys(JSON.parse(openapi.text).paths)).toContain("/api/handoffs/{id}")
        const missing = yield* get(`${desk.url}/no/such/route`)
        expect(missing.status).toBe(404)
        expect(JSON.parse(missing.text)).toMatchObject({ ok: false, error: "not_found" })

        expect(yield* desk.stop("SIGTERM")).toEqual({ code: 0, signal: null })
      }),
    240_000
  )
})
