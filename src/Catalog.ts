import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { HandoffRepo } from "./Catalog/HandoffRepo.ts"
import { makeTagsInUse } from "./Catalog/TagsInUse.ts"
import type { NewHandoff } from "./Catalog/HandoffRow.ts"
import { toPreview } from "./Catalog/toPreview.ts"
import type { CatalogQuery } from "./Domain/Discover.ts"
import { InvalidHandoff, NotFound, PayoutChangeRefused } from "./Domain/Errors.ts"
import type { FilingRequest } from "./Domain/Filing.ts"
import { filingIssues } from "./Domain/FilingRules.ts"
import { type DeskId, handoffSeq } from "./Domain/Ids.ts"
import type { Origin } from "./Domain/Preview.ts"
import { codePoints } from "./Domain/Text.ts"
import { DEMO_PACKET } from "./Guide/Example.ts"
import { AgentRepo } from "./Identity/AgentRepo.ts"

const normalizeTags = (tags: ReadonlyArray<string>) => [...new Set(tags.map((tag) => tag.trim().toLowerCase()))]

export const bodyHash = (body: string) => createHash("sha256").update(body, "utf8").digest("hex")

const toNewHandoff = (request: FilingRequest, origin: Origin, isDemo = false): NewHandoff => ({
  title: request.title.trim(),
  teaser: request.teaser.trim(),
  body: request.body,
  filer: request.filer.trim(),
  filer_did: request.filerDid,
  price_micro: request.priceUsd,
  reconstruct_micro: request.reconstructUsd,
  minutes: request.minutes ?? null,
  tags: normalizeTags(request.tags ?? []),
  contains: request.contains ?? [],
  does_not_contain: request.doesNotContain ?? [],
  why_pay: request.whyPay?.trim() ?? "",
  provenance: request.provenance ?? null,
  origin,
  is_demo: isDemo,
  hash: bodyHash(request.body),
  body_chars: codePoints(request.body)
})

const notFound = (id: string) => new NotFound({ message: `No handoff ${id}; ids look like DESK-12 (see /api/discover).` })

const make = Effect.gen(function*() {
  const repo = yield* HandoffRepo
  const agents = yield* AgentRepo
  const sql = yield* SqlClient.SqlClient
  const tagsInUse = yield* makeTagsInUse(repo.tagsInUse)

  /** The filer's agent record is created with its first filing, with the payout address it names, if any. */
  const claimPayout = (agent: DeskId, payoutAddress: string | undefined) =>
    Effect.gen(function*() {
      const record = yield* agents.lock(agent)
      if (payoutAddress === undefined || record.payout_address === payoutAddress) return
      if (record.payout_address !== null) {
        return yield* Effect.fail(
          new PayoutChangeRefused({
            message: "This id already has a different payoutAddress; change it through POST /api/agents with a signature."
          })
        )
      }
      yield* agents.update(agent, payoutAddress, record.spend_cap_micro)
    })

  const file = Effect.fn("Catalog.file")(function*(agent: DeskId, request: FilingRequest) {
    const issues = filingIssues(request, agent)
    if (issues.length > 0) {
      return yield* Effect.fail(
        new InvalidHandoff({ message: `The filing breaks ${issues.length} rule(s): see issues.`, issues })
      )
    }
    const row = yield* sql.withTransaction(
      Effect.zipRight(claimPayout(agent, request.payoutAddress), repo.insert(toNewHandoff(request, "filed")))
    ).pipe(Effect.catchTag("SqlError", Effect.die))
    yield* tagsInUse.add(row.tags)
    return toPreview(row)
  })

  /** Seed listings skip the identity check: the operator imports them for other filers. */
  const seed = Effect.fn("Catalog.seed")(function*(request: FilingRequest) {
    const issues = filingIssues(request, request.filerDid)
    if (issues.length > 0) {
      return yield* Effect.fail(new InvalidHandoff({ message: `Seed "${request.title}" breaks a rule.`, issues }))
    }
    const row = yield* repo.insert(toNewHandoff(request, "seed"))
    yield* tagsInUse.add(row.tags)
    return toPreview(row)
  })

  const get = Effect.fn("Catalog.get")(function*(id: string) {
    const seq = handoffSeq(id)
    if (Option.isNone(seq)) return yield* Effect.fail(notFound(id))
    const row = yield* repo.findBySeq(seq.value)
    if (Option.isNone(row)) return yield* Effect.fail(notFound(id))
    return toPreview(row.value)
  })

  const search = Effect.fn("Catalog.search")(function*(query: CatalogQuery) {
    const { rows, total } = yield* repo.search(query)
    return { total, items: rows.map(toPreview) }
  })

  const ensureDemo = Effect.gen(function*() {
    if (Option.isSome(yield* repo.demoSeq)) return
    yield* repo.insertDemo(toNewHandoff(DEMO_PACKET, "seed", true))
  }).pipe(Effect.withSpan("Catalog.ensureDemo"))

  const demoId = Effect.map(repo.demoSeq, Option.map((seq) => `DESK-${seq}`))

  return { file, seed, get, search, tagsInUse: tagsInUse.get, tagStats: repo.tagStats, ensureDemo, demoId } as const
})

export class Catalog extends Context.Tag("Catalog")<Catalog, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Catalog, make).pipe(Layer.provide([HandoffRepo.layer, AgentRepo.layer]))
}
