import { afterAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"

const dataDir = mkdtempSync(join(tmpdir(), "handoff-desk-disk-"))

/** The desk on the embedded store, DESK_DATA_DIR a real directory, with DESK_MIN_FREE_DISK_MB as given. */
const deskNeeding = (minFreeMb: string) =>
  deskOn(Pglite.layer({}), undefined, { config: { dataDir } }).pipe(
    Layer.provide(
      Layer.setConfigProvider(
        ConfigProvider.fromMap(new Map([["DESK_MIN_FREE_DISK_MB", minFreeMb]])).pipe(
          ConfigProvider.orElse(() => ConfigProvider.fromEnv())
        )
      )
    )
  )

const health = Effect.gen(function*() {
  const desk = yield* TestDesk
  const response = yield* Effect.promise(() => desk.request("/api/health"))
  return {
    status: response.status,
    retryAfter: response.headers.get("retry-after"),
    json: yield* Effect.promise(() => readJson(response))
  }
})

describe("/api/health and the embedded store's disk", () => {
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  // No file system here has a petabyte free: the desk must take its disk for full. With room, health is 200 in every
  // other suite (test/process/OneDesk.test.ts among them, on a real DESK_DATA_DIR and the default 64 MB).
  it.layer(deskNeeding(String(1024 ** 3)), { timeout: 120_000 })((it) => {
    it.effect("is 503 unavailable, naming the free space, when DESK_DATA_DIR's disk has less than it needs", () =>
      Effect.gen(function*() {
        const answer = yield* health
        expect(answer.status).toBe(503)
        expect(answer.retryAfter).not.toBeNull()
        expect(answer.json).toMatchObject({ ok: false, error: "unavailable" })
        expect(answer.json.message).toMatch(/DESK_DATA_DIR\) has \d+ MB free, under the 1073741824 MB/)
      }))
  })
})
