import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { readsDatabase } from "../../src/Desk/RequestRules.ts"
import { deskBehindDelayProxy } from "../support/DelayProxy.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { send } from "../support/Loopback.ts"
import { DATABASE_URL } from "../support/Storage.ts"

// Test-side reading of loosely typed JSON documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

interface Probe {
  readonly url: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** A request of each route that reaches the database, or the plain request of a route that does not. */
const probesFor = (me: string): Record<string, Probe> => ({
  "POST /api/handoffs": { url: "/api/handoffs", body: filing(me) },
  "GET /api/handoffs": { url: "/api/handoffs" },
  "GET /api/handoffs/{id}": { url: "/api/handoffs/DESK-1" },
  "GET /api/discover": { url: "/api/discover?q=retries" },
  "GET /api/demand": { url: "/api/demand" },
  "POST /api/handoffs/{id}/unlock": { url: "/api/handoffs/DESK-1/unlock", body: { payer: me } },
  "GET /api/handoffs/{id}/body": { url: "/api/handoffs/DESK-1/body" },
  "POST /api/handoffs/{id}/feedback": { url: "/api/handoffs/DESK-1/feedback", body: { useful: true } },
  "GET /api/receipts/{id}": { url: "/api/receipts/R-1" },
  "GET /api/receipts": { url: "/api/receipts" },
  "GET /api/earnings": { url: "/api/earnings" },
  "GET /api/books": { url: "/api/books" },
  "POST /api/agents": { url: "/api/agents", body: { id: me, spendCapUsd: 11 } },
  "GET /api/agents/{id}": { url: `/api/agents/${me}` },
  "GET /api/health": { url: "/api/health" },
  "GET /api/sandbox": { url: "/api/sandbox" },
  "GET /": { url: "/" },
  "GET /h/{id}": { url: "/h/DESK-1" },
  "GET /agents/{id}": { url: `/agents/${me}` },
  "POST /mcp": {
    url: "/mcp",
    body: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    headers: { accept: "application/json, text/event-stream" }
  }
})

/**
 * docs/errors.md: 503 `unavailable` (with Retry-After) when "the database does not answer". Every route that reads
 * the database (readsDatabase of src/Desk/RequestRules.ts) answers it, and the document states it on exactly those
 * routes: a client generated from the document has the 503 branch it needs, and no other. Asked of a desk whose
 * PostgreSQL went away (its connections cut, new ones refused), which every route meets at once; a database that
 * stays connected but silent is test/process/SilentDatabase.test.ts's. Needs DATABASE_URL; skipped without it.
 */
describe.skipIf(DATABASE_URL === undefined)("the OpenAPI document against a desk without its database", () => {
  it.scopedLive(
    "states 503 unavailable, with Retry-After, on each route that answers it, and only there",
    () =>
      Effect.gen(function*() {
        const { desk, proxy } = yield* deskBehindDelayProxy()
        const doc: Json = (yield* send(`${desk.url}/openapi.json`)).json
        const me = newAgentId()
        const probes = probesFor(me)
        const operations = Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
          Object.entries<Json>(item).map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, op }))
        )
        // Every route the rule says reads the database is asked below; a new one needs its probe here.
        expect(operations.filter(({ path }) => readsDatabase(path)).map(({ key }) => key).sort())
          .toEqual(Object.keys(probes).filter((key) => readsDatabase(key.split(" ")[1]!)).sort())

        yield* Effect.promise(proxy.close)
        const wrong: Array<string> = []
        for (const { key, op, path } of operations) {
          const [method] = key.split(" ")
          const probe = probes[key] ?? { url: path }
          const reply = yield* send(`${desk.url}${probe.url}`, {
            fresh: true,
            method,
            headers: {
              accept: "application/json",
              "x-agent-id": me,
              ...(probe.body === undefined ? {} : { "content-type": "application/json" }),
              ...probe.headers
            },
            ...(probe.body === undefined ? {} : { body: JSON.stringify(probe.body) })
          })
          const documented = op.responses["503"]
          const stated = JSON.stringify(documented?.content?.["application/json"]?.schema ?? {})
            .includes("#/components/schemas/Unavailable")
          if (readsDatabase(path)) {
            if (reply.status !== 503 || reply.json?.error !== "unavailable" || reply.headers["retry-after"] !== "5") {
              wrong.push(`${key}: answered ${reply.status} ${reply.text.slice(0, 80)}`)
            }
            if (!stated || documented.headers?.["Retry-After"] === undefined) wrong.push(`${key}: 503 not stated`)
          } else {
            if (reply.status === 503) wrong.push(`${key}: answered 503 without the database`)
            if (stated) wrong.push(`${key}: states a 503 unavailable it never answers`)
          }
        }
        expect(wrong).toEqual([])
      }),
    120_000
  )
})
