import { describe, expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { Catalog } from "../../src/Catalog.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

for (const backend of backends) {
  describe.skipIf(!backend.available)("previews read together", () => {
    layer(servicesOn(backend.layer), { excludeTestServices: true, timeout: "120 seconds" })(
      `over ${backend.name}`,
      (it) => {
        it.effect("reads made at once (boarding shared statements) each get their own handoff or not-found", () =>
          Effect.gen(function*() {
            const catalog = yield* Catalog
            const filed = yield* Effect.forEach([1, 2, 3, 4, 5], () => {
              const filer = DeskId.make(newAgentId())
              return catalog.file(filer, decodeFiling(filing(filer)))
            })
            const ids = [...filed.map((preview) => preview.id), "DESK-999999999", "DESK-999999998"]
            // Two hundred reads at once, each id many times over, in an order no batch keeps.
            const asked = Array.from({ length: 200 }, (_, i) => ids[(i * 3) % ids.length]!)
            const answers = yield* Effect.forEach(
              asked,
              (id) => Effect.either(catalog.get(id)),
              { concurrency: "unbounded" }
            )
            answers.forEach((answer, i) => {
              const mine = filed.find((preview) => preview.id === asked[i])
              if (mine === undefined) expect(answer).toMatchObject({ _tag: "Left", left: { _tag: "NotFound" } })
              else expect(answer).toMatchObject({ _tag: "Right", right: { id: mine.id, title: mine.title } })
            })
          }))
      }
    )
  })
}
