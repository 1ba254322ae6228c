import type { RequestStep } from "autocannon"
import { randomBytes } from "node:crypto"
import { type Prng, prng } from "./Random.ts"
import { handoffAt, TAGS, textQueries } from "./SyntheticCatalog.ts"

export const SCENARIOS = [
  "llms",
  "status",
  "discover-text",
  "discover-tag",
  "discover-deep-tag",
  "preview",
  "demand",
  "books",
  "file",
  "unlock-body",
  "health"
] as const
export type ScenarioName = typeof SCENARIOS[number]

export interface Scenario {
  readonly name: ScenarioName
  readonly title: string
  readonly requests: Array<RequestStep>
  /** Successful unlocks, for scenarios that unlock. */
  readonly unlocks: () => number
}

/** Filings use a catalog seed of their own, so they never repeat a loaded handoff. */
const FILING_SEED_OFFSET = 7_919

const filingOf = (seed: number, index: number) => {
  const handoff = handoffAt(seed + FILING_SEED_OFFSET, index)
  return {
    agent: handoff.filerDid,
    body: JSON.stringify({
      title: handoff.title,
      teaser: handoff.teaser,
      body: handoff.body,
      filer: handoff.filer,
      filerDid: handoff.filerDid,
      priceUsd: handoff.priceMicro / 1_000_000,
      reconstructUsd: handoff.reconstructMicro / 1_000_000,
      ...(handoff.minutes === null ? {} : { minutes: handoff.minutes }),
      tags: handoff.tags,
      contains: handoff.contains,
      doesNotContain: handoff.doesNotContain,
      whyPay: handoff.whyPay,
      provenance: handoff.provenance === null ? null : JSON.parse(handoff.provenance)
    })
  }
}

/**
 * Every request comes through a trusted proxy (the bench starts the desk with DESK_TRUST_PROXY=127.0.0.1) from
 * a random client address in 10.0.0.0/8 (about 16.6 million), so the desk's default rate limit stays on and no single
 * client reaches it; nearly every request is a new client to the limiter, which keeps each for its window.
 */
const client = (random: Prng) => `10.${random.int(0, 255)}.${random.int(0, 255)}.${random.int(1, 254)}`

const get = (random: Prng, next: () => string): RequestStep => ({
  method: "GET",
  setupRequest: (request) => ({
    ...request,
    path: next(),
    headers: { ...request.headers, "x-forwarded-for": client(random) }
  })
})

/**
 * The request mix of each scenario. Choices come from a seeded generator, so two runs send the same
 * sequence of queries and ids (interleaving across connections aside).
 */
export const scenario = (name: ScenarioName, seed: number, handoffs: number, firstFiling = 0): Scenario => {
  const random = prng(seed ^ 0x5ce7a)
  const anyHandoff = () => `DESK-${random.int(1, handoffs)}`
  const none = () => 0
  switch (name) {
    case "discover-text": {
      const queries = textQueries(seed, 1_000, handoffs).map((q) => `/api/discover?q=${encodeURIComponent(q)}`)
      let i = 0
      return {
        name,
        title: "discover, text query",
        requests: [get(random, () => queries[i++ % queries.length]!)],
        unlocks: none
      }
    }
    case "discover-tag": {
      let i = 0
      return {
        name,
        title: "discover by tag, sort=savings",
        requests: [get(random, () => `/api/discover?tag=${TAGS[i++ % TAGS.length]}&sort=savings`)],
        unlocks: none
      }
    }
    case "discover-deep-tag": {
      // Pages from DEEP_FROM results in (page 11 of 100) down to the result window's end, where the tag has them:
      // each tag holds 2-15 % of the catalog (at 100,000 handoffs pages 11-20, at 1,000,000 pages 11-100).
      const lastPage = Math.max(11, Math.min(100, Math.floor((handoffs * 0.02) / 100)))
      let i = 0
      return {
        name,
        title: "discover by tag, deep pages",
        requests: [
          get(
            random,
            () =>
              `/api/discover?tag=${TAGS[i++ % TAGS.length]}&sort=${random.chance(0.5) ? "recent" : "savings"}` +
              `&limit=100&page=${random.int(11, lastPage)}`
          )
        ],
        unlocks: none
      }
    }
    case "preview":
      return {
        name,
        title: "preview by id",
        requests: [get(random, () => `/api/handoffs/${anyHandoff()}`)],
        unlocks: none
      }
    case "file": {
      let i = firstFiling
      return {
        name,
        title: "file a handoff",
        requests: [{
          method: "POST",
          path: "/api/handoffs",
          setupRequest: (request) => {
            const filing = filingOf(seed, i++)
            return {
              ...request,
              headers: {
                ...request.headers,
                "content-type": "application/json",
                "x-agent-id": filing.agent,
                "x-forwarded-for": client(random)
              },
              body: filing.body
            }
          }
        }],
        unlocks: none
      }
    }
    case "unlock-body": {
      let unlocked = 0
      let agents = 0
      // A fresh identity per unlock; the random prefix keeps identities of separate runs apart.
      const prefix = randomBytes(8).toString("hex")
      return {
        name,
        title: "unlock + body, fresh identities",
        unlocks: () => unlocked,
        requests: [
          {
            method: "POST",
            setupRequest: (request, context) => {
              const agent = `did:desk:${prefix}${(agents++).toString(16).padStart(16, "0")}`
              const id = anyHandoff()
              context.agent = agent
              context.id = id
              return {
                ...request,
                path: `/api/handoffs/${id}/unlock`,
                headers: {
                  ...request.headers,
                  "content-type": "application/json",
                  "x-agent-id": agent,
                  "x-forwarded-for": client(random)
                },
                body: JSON.stringify({ payer: agent })
              }
            },
            onResponse: (status) => {
              if (status === 200) unlocked++
            }
          },
          {
            method: "GET",
            setupRequest: (request, context) => ({
              ...request,
              path: `/api/handoffs/${String(context.id)}/body`,
              headers: { ...request.headers, "x-agent-id": String(context.agent), "x-forwarded-for": client(random) }
            })
          }
        ]
      }
    }
    case "health":
      return { name, title: "health", requests: [get(random, () => "/api/health")], unlocks: none }
    case "llms":
      // Exempt from the rate limit, so asked as the empty endpoint is: one fixed request, which autocannon builds
      // once. A forwarded address would change nothing the desk does here, and building each request anew cost the
      // load generator, on the desk's two cores, about a third of what the desk spent.
      return { name, title: "/llms.txt (no database)", requests: [{ method: "GET", path: "/llms.txt" }], unlocks: none }
    case "status":
      return { name, title: "/api/status (no database)", requests: [get(random, () => "/api/status")], unlocks: none }
    case "demand":
      return { name, title: "/api/demand", requests: [get(random, () => "/api/demand")], unlocks: none }
    case "books":
      return { name, title: "/api/books", requests: [get(random, () => "/api/books")], unlocks: none }
  }
}
