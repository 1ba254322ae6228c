import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { makeDeepPages } from "./Catalog/DeepPages.ts"
import { type BodyTaken, HandoffRepo } from "./Catalog/HandoffRepo.ts"
import type { NewHandoff } from "./Catalog/HandoffRow.ts"
import { fitListing, itemsOmitted } from "./Catalog/ListingBudget.ts"
import { PreviewCache } from "./Catalog/PreviewCache.ts"
import { makeTagsInUse } from "./Catalog/TagsInUse.ts"
import { toPreview } from "./Catalog/toPreview.ts"
import { payoutAddressProblem } from "./Domain/Agent.ts"
import { bodyKey } from "./Domain/BodyKey.ts"
import type { CatalogQuery } from "./Domain/Discover.ts"
import { DuplicateBody, InvalidHandoff, NotFound, PayoutChangeRefused } from "./Domain/Errors.ts"
import type { FilingRequest } from "./Domain/Filing.ts"
import { identityIssues } from "./Domain/FilingRules.ts"
import { type DeskId, handoffIdOf, handoffSeq } from "./Domain/Ids.ts"
import { pagesOf } from "./Domain/Paging.ts"
import type { Origin } from "./Domain/Preview.ts"
import { cleanLabel, codePoints } from "./Domain/Text.ts"
import { DEMO_PACKET, EXAMPLE_PACKET } from "./Guide/Example.ts"
import { AgentRepo } from "./Identity/AgentRepo.ts"
import { RailProfile } from "./Settlement.ts"
import { spanned } from "./Spans.ts"

const normalizeTags = (tags: ReadonlyArray<string>) => [...new Set(tags.map(cleanLabel))].filter((tag) => tag !== "")

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
  body_key: isDemo ? null : bodyKey(request.body),
  body_chars: codePoints(request.body)
})

/** Bodies the desk gives away: never for sale, whoever files them. The demo packet's is reserved here, not by its row. */
const RESERVED_KEYS = new Set([bodyKey(EXAMPLE_PACKET.body), bodyKey(DEMO_PACKET.body)])

const notFound = (id: string) =>
  new NotFound({ message: `No handoff ${id}; ids look like DESK-12 (see /api/discover).` })

const make = Effect.gen(function*() {
  const fn = yield* spanned
  const repo = yield* HandoffRepo
  const previews = yield* PreviewCache
  const agents = yield* AgentRepo
  const sql = yield* SqlClient.SqlClient
  const rail = yield* RailProfile
  const tagCounts = yield* makeTagsInUse(repo.tagCounts)
  const deepPages = yield* makeDeepPages()

  /** The filer's agent record is created with its first filing, with the payout address it names, if any. */
  const claimPayout = (agent: DeskId, payoutAddress: string | undefined) =>
    Effect.gen(function*() {
      const record = yield* agents.lock(agent)
      if (payoutAddress === undefined || record.payout_address === payoutAddress) return
      if (record.payout_address !== null) {
        return yield* Effect.fail(
          new PayoutChangeRefused({
            message:
              "This id already has a different payoutAddress; change it through POST /api/agents with a signature."
          })
        )
      }
      yield* agents.update(agent, {
        payoutAddress,
        payoutSignedAt: record.payout_signed_at,
        capMicro: record.spend_cap_micro,
        requireSignIn: record.require_sign_in
      })
    })

  const payoutIssues = (request: FilingRequest) => {
    const problem = request.payoutAddress === undefined ? undefined : payoutAddressProblem(request.payoutAddress, rail)
    return problem === undefined ? [] : [{ path: "payoutAddress", message: problem }]
  }

  const demoName = Effect.map(
    repo.demoSeq,
    Option.match({
      onNone: () => "",
      onSome: (seq) => `, also the demo packet ${handoffIdOf(seq)}'s`
    })
  )

  /** The 409 that names what already sells this body; a copy of a given-away body names the example. */
  const duplicateOf = (key: string) =>
    Effect.gen(function*() {
      if (RESERVED_KEYS.has(key)) {
        return new DuplicateBody({
          message:
            `This body is the free example's (GET /api/example${yield* demoName}): anyone reads it for free, so ` +
            "it cannot be sold. File a body of your own work.",
          duplicateOf: EXAMPLE_PACKET.id
        })
      }
      const listed = Option.map(yield* repo.findByBodyKey(key), handoffIdOf)
      return new DuplicateBody({
        message: `This body (case, spacing, blank lines and invisible characters aside) is already listed${
          Option.match(listed, { onNone: () => " by a filing being committed now", onSome: (id) => ` as ${id}` })
        }: a copy cannot be sold again. File a body of your own work.`,
        duplicateOf: Option.getOrNull(listed)
      })
    })

  const refuseReserved = (key: string | null) =>
    key !== null && RESERVED_KEYS.has(key) ? Effect.flatMap(duplicateOf(key), Effect.fail) : Effect.void

  /** The unique body key holds the rule for every desk on the database; the failed transaction is over by now. */
  const taken = (error: BodyTaken) => Effect.flatMap(duplicateOf(error.bodyKey), Effect.fail)

  /**
   * A body listed already is refused before its insert: the insert draws its id from the sequence before the unique
   * key refuses it, so each copy refused there left an id that never names a handoff. The key stays the backstop
   * for two filings of one body at once.
   */
  const refuseListed = (key: string) =>
    Effect.flatMap(
      repo.findByBodyKey(key),
      Option.match({ onNone: () => Effect.void, onSome: () => Effect.flatMap(duplicateOf(key), Effect.fail) })
    )

  const file = fn("Catalog.file")(function*(agent: DeskId, request: FilingRequest) {
    const issues = [...identityIssues(request.filerDid, agent), ...payoutIssues(request)]
    if (issues.length > 0) {
      return yield* Effect.fail(
        new InvalidHandoff({ message: `The filing breaks ${issues.length} rule(s): see issues.`, issues })
      )
    }
    const handoff = toNewHandoff(request, "filed")
    yield* refuseReserved(handoff.body_key)
    yield* refuseListed(handoff.body_key!)
    const row = yield* sql.withTransaction(
      Effect.zipRight(claimPayout(agent, request.payoutAddress), repo.insert(handoff))
    ).pipe(Effect.catchTags({ SqlError: Effect.die, BodyTaken: taken }))
    yield* tagCounts.add(row.tags)
    return toPreview(row)
  })

  /** Seed listings skip the identity check: the operator imports them for other filers. */
  const seed = Effect.fn("Catalog.seed")(function*(request: FilingRequest) {
    const handoff = toNewHandoff(request, "seed")
    yield* refuseReserved(handoff.body_key)
    // Seeds share one transaction, which a refused insert ends: look first, so the answer can name the listing.
    yield* refuseListed(handoff.body_key!)
    // Refused here, the shared transaction is over: no statement can name the other desk's listing.
    const row = yield* repo.insert(handoff).pipe(
      Effect.catchTag("BodyTaken", () =>
        Effect.fail(
          new DuplicateBody({
            message: `"${request.title}": another desk listed this body meanwhile.`,
            duplicateOf: null
          })
        ))
    )
    yield* tagCounts.add(row.tags)
    return toPreview(row)
  })

  const get = fn("Catalog.get")(function*(id: string) {
    const seq = handoffSeq(id)
    if (Option.isNone(seq)) return yield* Effect.fail(notFound(id))
    const preview = yield* previews.through(seq.value, Effect.map(repo.findBySeq(seq.value), Option.map(toPreview)))
    if (Option.isNone(preview)) return yield* Effect.fail(notFound(id))
    return preview.value
  })

  /**
   * One page of previews as every listing answers it (REST discover and catalog, the MCP search tool, the catalog
   * page): the page, its size, how many pages the result window holds, and `itemsOmitted` when the page was cut
   * short to fit the listing budget. Deep pages are read one at a time (src/Catalog/DeepPages.ts).
   */
  const discover = fn("Catalog.discover")(function*(query: CatalogQuery) {
    const { match, omitted: cut, rows, total } = yield* deepPages(query, repo.search(query))
    const { items, omitted } = fitListing(rows.map(toPreview))
    return {
      total,
      page: query.page,
      limit: query.limit,
      pages: pagesOf(total, query.limit),
      match: query.q === "" ? null : match,
      items,
      ...itemsOmitted(cut + omitted)
    }
  })

  const ensureDemo = Effect.gen(function*() {
    if (Option.isSome(yield* repo.demoSeq)) return
    yield* repo.insertDemo(toNewHandoff(DEMO_PACKET, "seed", true))
  }).pipe(Effect.withSpan("Catalog.ensureDemo"))

  const demoId = Effect.map(repo.demoSeq, Option.map((seq) => `DESK-${seq}`))

  const demoTags = Effect.flatMap(repo.demoSeq, (seq) =>
    Option.isNone(seq)
      ? Effect.succeed([])
      : Effect.map(repo.findBySeq(seq.value), Option.match({ onNone: () => [], onSome: (row) => row.tags })))

  /** The tags in use, most used first; with `includeDemo` (a listing that shows the demo packet) its tags too. */
  const tagsInUse = (includeDemo: boolean) => includeDemo ? Effect.flatMap(demoTags, tagCounts.get) : tagCounts.get()

  return { file, seed, get, discover, tagsInUse, tagStats: repo.tagStats, ensureDemo, demoId } as const
})

export class Catalog extends Context.Tag("Catalog")<Catalog, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Catalog, make).pipe(Layer.provide([HandoffRepo.layer, AgentRepo.layer]))
}
