import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const call = <A>(f: (desk: TestDesk["Type"]) => Promise<A>) =>
  Effect.flatMap(TestDesk, (desk) => Effect.promise(() => f(desk)))
const countRows = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => sql<{ n: string | number }>`SELECT count(*) AS n FROM handoffs`
).pipe(
  Effect.map((rows) => Number(rows[0]!.n)),
  Effect.orDie
)

const agent = newAgentId()
const padded = "## Failed approaches\nx\n## Recommended next actions\ny\n"

const invalid: ReadonlyArray<[string, Record<string, unknown>, string]> = [
  ["missing title", { title: undefined }, "title"],
  ["body under 400 characters", { body: BODY.slice(0, 300) }, "body"],
  ["body padded with whitespace", { body: padded + " ".repeat(500) }, "body"],
  ["body padded with zero-width characters", { body: padded + "\u200b".repeat(500) }, "body"],
  // Blank by rendering, though not format characters: Hangul fillers, the blank Braille pattern, stacked accents.
  ["body padded with Hangul fillers", { body: padded + "\u3164\uffa0\u115f".repeat(120) }, "body"],
  ["body padded with blank Braille patterns", { body: padded + "\u2800".repeat(400) }, "body"],
  ["body padded with combining marks", { body: padded + "e" + "\u0301\u034f".repeat(200) }, "body"],
  ["title of a Hangul filler", { title: "\u3164" }, "title"],
  // Control characters but tab and line breaks: six characters of JSON each in x402's header, where 200 of them
  // took a body's 402 past what Node's fetch reads.
  ["title with a control character", { title: "Queue stalls\u0001 after the move" }, "title"],
  ["teaser with DEL", { teaser: "The queue stalled\u007f after the move." }, "teaser"],
  ["tag with a C1 control", { tags: ["ruby\u0085x"] }, "tags.0"],
  ["tag of a Hangul filler", { tags: ["ruby", "\u3164"] }, "tags.1"],
  ["tag of a blank Braille pattern", { tags: ["\u2800"] }, "tags.0"],
  ["no Failed approaches section", { body: BODY.replace("## Failed approaches", "## Attempts") }, "body"],
  ["no Recommended next actions section", { body: BODY.replace("## Recommended next actions", "## Next") }, "body"],
  // Not headings as Markdown renders them: inside a code fence or an HTML comment, or with no space after the #s.
  ["sections only inside code fences", {
    body: BODY.replace("## Failed approaches", "```\n## Failed approaches\n```")
      .replace("## Recommended next actions", "~~~~\n## Recommended next actions\n~~~")
  }, "body"],
  ["a section only inside an HTML comment", {
    body: BODY.replace("## Failed approaches", "<!--\n## Failed approaches\n-->")
  }, "body"],
  ["a section heading without a space", { body: BODY.replace("## Failed approaches", "##Failed approaches") }, "body"],
  ["price of zero", { priceUsd: 0 }, "priceUsd"],
  ["price under one micro-USDC", { priceUsd: 0.0000001 }, "priceUsd"],
  ["price with seven decimals", { priceUsd: 0.1234567 }, "priceUsd"],
  ["negative price", { priceUsd: -1 }, "priceUsd"],
  ["price as a string", { priceUsd: "0.5" }, "priceUsd"],
  ["reconstruct equal to price", { reconstructUsd: 0.5 }, "reconstructUsd"],
  ["reconstruct under price", { reconstructUsd: 0.1 }, "reconstructUsd"],
  ["filerDid different from the header", { filerDid: newAgentId() }, "filerDid"],
  ["malformed filerDid", { filerDid: "did:desk:XYZ" }, "filerDid"],
  ["desk-owned field id", { id: "DESK-1" }, "id"],
  ["desk-owned field hash", { hash: "0".repeat(64) }, "hash"],
  ["desk-owned field purchases", { purchases: 5 }, "purchases"],
  ["desk-owned field origin", { origin: "seed" }, "origin"],
  ["a doesNotContain phrase in the body", { doesNotContain: ["SIDEKIQMON"] }, "doesNotContain.0"],
  // The phrase as a reader sees it: a zero-width space, a line break, a composed accent change nothing.
  ["a doesNotContain phrase in the body, spelled apart", {
    doesNotContain: ["ok", "Sidekiq\u200bMon  over\ntwo"]
  }, "doesNotContain.1"],
  ["title over 200 characters", { title: "t".repeat(201) }, "title"],
  ["too many tags", { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, "tags"],
  ["tag over 40 characters", { tags: ["x".repeat(41)] }, "tags.0"],
  ["unknown provenance member", { provenance: { vendor: "a", secret: 1 } }, "provenance.secret"]
]

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`filing over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("files a handoff and returns every preview field", () =>
        Effect.gen(function*() {
          const response = yield* call((desk) =>
            desk.request("/api/handoffs", { json: filing(agent, { body: BODY }), agent })
          )
          expect(response.status).toBe(201)
          const preview = yield* Effect.promise(() => readJson(response))
          expect(preview.id).toMatch(/^DESK-\d+$/)
          expect(preview).toMatchObject({
            title: filing(agent).title,
            tags: ["ruby", "sidekiq", "migration"],
            priceUsd: 0.5,
            reconstructUsd: 40,
            minutes: null,
            filer: "test-filer",
            filerDid: agent,
            purchases: 0,
            useful: 0,
            notUseful: 0,
            hash: createHash("sha256").update(BODY, "utf8").digest("hex"),
            bodyChars: [...BODY].length,
            savingsUsd: 39.5,
            kind: "work",
            origin: "filed",
            isSeeded: false,
            qualityFlags: [],
            feeBps: 1000,
            feePct: 10,
            filerSharePct: 90,
            filerPayoutUsd: 0.45,
            deskFeeUsd: 0.05,
            provenanceMissing: false,
            urls: {
              html: `/h/${preview.id}`,
              preview: `/api/handoffs/${preview.id}`,
              unlock: `/api/handoffs/${preview.id}/unlock`,
              body: `/api/handoffs/${preview.id}/body`
            },
            // The filer's page: the link from a preview to the people's side (beside urls, the handoff's own).
            filerUrl: `/agents/${preview.filerDid}`
          })
          // As the spec has them: html, preview, unlock and body, each one of the handoff's own paths.
          expect(Object.keys(preview.urls).sort()).toEqual(["body", "html", "preview", "unlock"])
          for (const path of Object.values<string>(preview.urls)) {
            expect(path).toMatch(/^\/(h\/DESK-\d+|api\/handoffs\/DESK-\d+(\/unlock|\/body)?)$/)
          }
          expect(preview.provenance).toMatchObject({
            vendor: "Anthropic",
            model: "claude",
            durationMs: null,
            contextWindow: null
          })
          expect(typeof preview.reconstructNote).toBe("string")
          expect(typeof preview.savingsNote).toBe("string")
          expect(typeof preview.whyBuy).toBe("string")
          expect(new Date(preview.filedAt).toISOString()).toBe(preview.filedAt)
          expect(JSON.stringify(preview)).not.toContain("sidekiqmon")

          const fetched = yield* call((desk) => desk.request(`/api/handoffs/${preview.id}`).then(readJson))
          expect(fetched).toEqual(preview)
        }))

      it.effect("floors the filer's 90 % to whole micro-USDC and flags extreme ratios", () =>
        Effect.gen(function*() {
          const preview = yield* call((desk) =>
            desk.request("/api/handoffs", {
              json: filing(agent, { priceUsd: 0.000007, reconstructUsd: 90, provenance: null }),
              agent
            })
              .then(readJson)
          )
          expect(preview.filerPayoutUsd).toBe(0.000006)
          expect(preview.deskFeeUsd).toBe(0.000001)
          expect(preview.provenance).toBeNull()
          expect(preview.provenanceMissing).toBe(true)
          expect(preview.qualityFlags).toEqual(["unproven_extreme_ratio"])
          expect(preview.whyBuy).toBeUndefined()
        }))

      it.effect("accepts any price of at least one micro-USDC, with no maximum", () =>
        Effect.gen(function*() {
          for (const [priceUsd, reconstructUsd] of [[0.000001, 1], [5000, 1_000_000]]) {
            const response = yield* call((desk) =>
              desk.request("/api/handoffs", { json: filing(agent, { priceUsd, reconstructUsd }), agent })
            )
            expect(response.status).toBe(201)
          }
        }))

      it.effect("takes a body of exactly 400 characters as the spec and the published schema count them", () =>
        Effect.gen(function*() {
          // Markdown as agents write it: blank lines, indentation, an emoji (two UTF-16 units, one code point).
          const markdown = "## Context\n\nThe queue stalled after the move. 🙂\n\n## Failed approaches\n\n" +
            "  - Raising the pool size.\n\n## Recommended next actions\n\n1. Pin the client.\n\n"
          const sized = (characters: number) => {
            const words = "The retry storm came from the scheduler, not the broker. ".repeat(10)
            return markdown + words.slice(0, characters - [...markdown].length)
          }
          expect([...sized(400)]).toHaveLength(400)
          const short = yield* call((desk) =>
            desk.request("/api/handoffs", { json: filing(agent, { body: sized(399) }), agent })
          )
          expect(short.status).toBe(422)
          expect(yield* Effect.promise(() => readJson(short))).toMatchObject({
            error: "invalid_handoff",
            issues: [{ path: "body", message: "must be at least 400 characters; got 399" }]
          })
          const exact = yield* call((desk) =>
            desk.request("/api/handoffs", { json: filing(agent, { body: sized(400) }), agent })
          )
          expect(exact.status).toBe(201)
          expect(yield* Effect.promise(() => readJson(exact))).toMatchObject({ bodyChars: 400 })
        }))

      it.effect("reads a body back character for character, a leading and a trailing U+FEFF included", () =>
        Effect.gen(function*() {
          // PGlite's text decoder dropped a leading U+FEFF as a byte order mark: the body read was one character
          // short and no longer hashed to the preview's hash (adapters/storage/PgliteWorker.ts).
          // Its own words at the end: a copy of another test's body would be refused (invisible characters aside).
          const body = `\ufeff${BODY}\nRead back by ${newAgentId()}.\ufeff`
          const filed = yield* call((desk) => desk.request("/api/handoffs", { json: filing(agent, { body }), agent }))
          expect(filed.status).toBe(201)
          const preview = yield* Effect.promise(() => readJson(filed))
          const hash = createHash("sha256").update(body, "utf8").digest("hex")
          expect(preview).toMatchObject({ hash, bodyChars: [...body].length })
          const buyer = newAgentId()
          const unlocked = yield* call((desk) =>
            desk.request(`/api/handoffs/${preview.id}/unlock`, { json: { payer: buyer }, agent: buyer })
          )
          expect(unlocked.status).toBe(200)
          const read = yield* call((desk) => desk.request(`/api/handoffs/${preview.id}/body`, { agent: buyer }))
          expect(yield* Effect.promise(() => readJson(read))).toMatchObject({ body, hash })
        }))

      it.effect("reads headings as Markdown does: a # line in a code block or a comment is none, later ones count", () =>
        Effect.gen(function*() {
          const body = "## Context\n\n```sh\n# Failed approaches are logged here\ngrep retry log\n```\n\n" +
            "<!-- ## Recommended next actions: fill in -->\n\n### Failed approaches\n\n- Raising the pool.\n\n" +
            "   # Recommended next actions\n\n1. Pin the client.\n\n" +
            "The retry storm came from the scheduler, not the broker. ".repeat(8)
          const filed = yield* call((desk) => desk.request("/api/handoffs", { json: filing(agent, { body }), agent }))
          expect(filed.status).toBe(201)
        }))

      for (const [name, change, path] of invalid) {
        it.effect(`422 and nothing written: ${name}`, () =>
          Effect.gen(function*() {
            const before = yield* countRows
            const response = yield* call((desk) =>
              desk.request("/api/handoffs", { json: filing(agent, change), agent })
            )
            const body = yield* Effect.promise(() => readJson(response))
            expect(response.status).toBe(422)
            expect(body).toMatchObject({ ok: false, error: "invalid_handoff" })
            expect(typeof body.message).toBe("string")
            expect(body.issues.map((_: { path: string }) => _.path)).toContain(path)
            expect(yield* countRows).toBe(before)
          }))
      }

      it.effect("one 422 lists every problem, filerDid against the header among them", () =>
        Effect.gen(function*() {
          const before = yield* countRows
          const other = newAgentId()
          const bad = filing(other, { priceUsd: 0.1234567, reconstructUsd: 0.01, extra: true })
          const response = yield* call((desk) => desk.request("/api/handoffs", { json: bad, agent }))
          expect(response.status).toBe(422)
          const body = yield* Effect.promise(() => readJson(response))
          expect(body.error).toBe("invalid_handoff")
          expect(body.issues.map((_: { path: string }) => _.path).sort()).toEqual(
            ["extra", "filerDid", "priceUsd", "reconstructUsd"]
          )
          expect(body.message).toContain("filerDid")
          expect(yield* countRows).toBe(before)
        }))

      it.effect("a refused body is never echoed back in the 422", () =>
        Effect.gen(function*() {
          const secret = "the sealed answer is to raise max_connections"
          for (const body of [`${secret}\u0000`, [secret], { secret }]) {
            const response = yield* call((desk) =>
              desk.request("/api/handoffs", { json: filing(agent, { body }), agent })
            )
            expect(response.status).toBe(422)
            const text = yield* Effect.promise(() => response.text())
            expect(text).toContain("\"path\":\"body\"")
            expect(text).not.toContain("sealed answer")
          }
          // Nor the whole request, when it is a list or a string holding the body.
          for (const request of [[filing(agent, { body: `${secret} `.repeat(40) })], `${secret} `.repeat(40)]) {
            const response = yield* call((desk) => desk.request("/api/handoffs", { json: request, agent }))
            expect(response.status).toBe(422)
            expect(yield* Effect.promise(() => response.text())).not.toContain("sealed answer")
          }
        }))

      it.effect("requires a well-formed X-AGENT-ID", () =>
        Effect.gen(function*() {
          const missing = yield* call((desk) => desk.request("/api/handoffs", { json: filing(agent) }))
          expect(missing.status).toBe(401)
          expect(yield* Effect.promise(() => readJson(missing))).toMatchObject({
            ok: false,
            error: "agent_id_required"
          })
          const malformed = yield* call((desk) =>
            desk.request("/api/handoffs", { json: filing(agent), agent: "did:desk:ABC" })
          )
          expect(malformed.status).toBe(400)
          expect(yield* Effect.promise(() => readJson(malformed))).toMatchObject({
            ok: false,
            error: "invalid_agent_id"
          })
        }))

      it.effect("judges X-AGENT-ID before the body: a bad filing with a bad header is about the header", () =>
        Effect.gen(function*() {
          const before = yield* countRows
          const bad = { ...filing(agent), filerDid: "did:desk:nope", priceUsd: -1 }
          const malformed = yield* call((desk) => desk.request("/api/handoffs", { json: bad, agent: "did:desk:ABC" }))
          expect(malformed.status).toBe(400)
          expect(yield* Effect.promise(() => readJson(malformed))).toMatchObject({ error: "invalid_agent_id" })
          const missing = yield* call((desk) => desk.request("/api/handoffs", { json: bad }))
          expect(missing.status).toBe(401)
          expect(yield* Effect.promise(() => readJson(missing))).toMatchObject({ error: "agent_id_required" })
          const blank = yield* call((desk) => desk.request("/api/handoffs", { json: bad, agent: "   " }))
          expect(blank.status).toBe(401)
          // With a well-formed id the same filing is refused for its fields.
          const valid = yield* call((desk) => desk.request("/api/handoffs", { json: bad, agent }))
          expect(valid.status).toBe(422)
          expect(yield* countRows).toBe(before)
        }))

      it.effect("judges X-AGENT-ID before reading the body, on every route that acts as an identity", () =>
        Effect.gen(function*() {
          const before = yield* countRows
          const routes = [
            "/api/handoffs",
            "/api/handoffs/DESK-1/unlock",
            "/api/handoffs/DESK-1/feedback",
            "/api/agents"
          ]
          const bodies: ReadonlyArray<readonly [string, string | Uint8Array, number, string]> = [
            ["application/json", "{not json", 400, "invalid_json"],
            ["text/plain", "hello", 415, "unsupported_media_type"],
            ["application/json", new Uint8Array([0x7b, 0xff, 0x7d]), 400, "invalid_json"]
          ]
          for (const path of routes) {
            for (const [type, body, status, error] of bodies) {
              const send = (header?: string) =>
                call((desk) =>
                  desk.request(path, {
                    method: "POST",
                    body,
                    headers: { "content-type": type, ...(header === undefined ? {} : { "x-agent-id": header }) }
                  })
                )
              const missing = yield* send()
              expect([path, type, missing.status]).toEqual([path, type, 401])
              expect(yield* Effect.promise(() => readJson(missing))).toMatchObject({ error: "agent_id_required" })
              const malformed = yield* send("did:desk:ABC")
              expect([path, type, malformed.status]).toEqual([path, type, 400])
              expect(yield* Effect.promise(() => readJson(malformed))).toMatchObject({ error: "invalid_agent_id" })
              // Named well, the same body is refused for what it is.
              const named = yield* send(agent)
              expect([path, type, named.status]).toEqual([path, type, status])
              expect(yield* Effect.promise(() => readJson(named))).toMatchObject({ error })
            }
          }
          expect(yield* countRows).toBe(before)
        }))

      it.effect("refuses a number its JSON parse would change, as sent, before it could be stored rounded", () =>
        Effect.gen(function*() {
          const before = yield* countRows
          const raw = (path: string, text: string, headers: Record<string, string> = {}) =>
            call((desk) =>
              desk.request(path, {
                method: "POST",
                body: text,
                agent,
                headers: { "content-type": "application/json", ...headers }
              }).then(async (response) => ({ status: response.status, json: await readJson(response) }))
            )
          // 0.2500000000000000001 parses to 0.25, which has 6 decimals: it was filed at 0.25.
          const valid = JSON.stringify(filing(agent, { priceUsd: 0.25 }))
          const filed = yield* raw(
            "/api/handoffs",
            valid.replace("\"priceUsd\":0.25", "\"priceUsd\":0.2500000000000000001")
          )
          expect(filed.status).toBe(422)
          expect(filed.json).toMatchObject({
            error: "invalid_handoff",
            issues: [{ path: "priceUsd", message: expect.stringContaining("0.2500000000000000001") }]
          })
          const cap = yield* raw(
            "/api/agents",
            `{"id":"${agent}","spendCapUsd":10.0000000000000000001}`
          )
          expect(cap.status).toBe(422)
          expect(cap.json).toMatchObject({ error: "invalid_request", issues: [{ path: "spendCapUsd" }] })
          // Beside every other mistake of the filing, in the same answer (it hid them all before).
          const { title: _, ...untitled } = filing(agent, { priceUsd: 0.25, reconstructUsd: 30, body: "short" })
          const mixed = yield* raw(
            "/api/handoffs",
            JSON.stringify(untitled)
              .replace("\"priceUsd\":0.25", "\"priceUsd\":0.2500000000000000001")
              .replace("\"reconstructUsd\":30", "\"reconstructUsd\":1e400")
          )
          expect(mixed.status).toBe(422)
          expect([...new Set(mixed.json.issues.map((_: { path: string }) => _.path))].sort()).toEqual(
            ["body", "priceUsd", "reconstructUsd", "title"]
          )
          expect(mixed.json.issues.find((_: { path: string }) => _.path === "reconstructUsd").message).toBe(
            "is 1e400, which no JSON number holds exactly (it reads as Infinity): send it with at most 15 significant " +
              "digits"
          )
          expect(mixed.json.message).toContain("0.2500000000000000001")
          // A field no filing takes is named as unknown, whatever number it holds.
          const stray = yield* raw("/api/handoffs", `${valid.slice(0, -1)},"extra":1e400}`)
          expect(stray.json.issues).toEqual([{ path: "extra", message: expect.stringMatching(/^unknown field/) }])
          expect((yield* raw("/api/agents", `{"id":"${agent}","spendCapUsd":10.000001}`)).status).toBe(200)
          const mcp = yield* raw(
            "/mcp",
            `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"file_handoff","arguments":${
              valid.replace("\"priceUsd\":0.25", "\"priceUsd\":0.2500000000000000001")
            }}}`,
            { accept: "application/json, text/event-stream" }
          )
          expect(mcp.status).toBe(400)
          expect(mcp.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
          expect(yield* countRows).toBe(before)
        }))

      it.effect("answers malformed, oversized and non-JSON bodies with JSON errors", () =>
        Effect.gen(function*() {
          const before = yield* countRows
          const broken = yield* call((desk) =>
            desk.request("/api/handoffs", {
              method: "POST",
              body: "{not json",
              agent,
              headers: { "content-type": "application/json" }
            })
          )
          expect(broken.status).toBe(400)
          expect(yield* Effect.promise(() => readJson(broken))).toMatchObject({ error: "invalid_json" })
          const huge = yield* call((desk) =>
            desk.request("/api/handoffs", { json: filing(agent, { body: "x".repeat(1_100_000) }), agent })
          )
          expect(huge.status).toBe(413)
          expect(yield* Effect.promise(() => readJson(huge))).toMatchObject({ error: "payload_too_large" })
          const text = yield* call((desk) =>
            desk.request("/api/handoffs", {
              method: "POST",
              body: "title=x",
              agent,
              headers: { "content-type": "text/plain" }
            })
          )
          expect(text.status).toBe(415)
          expect(yield* countRows).toBe(before)
        }))

      it.effect("answers unknown handoffs and routes with a JSON 404", () =>
        Effect.gen(function*() {
          for (const path of ["/api/handoffs/DESK-999999", "/api/handoffs/not-an-id", "/api/nothing-here"]) {
            const response = yield* call((desk) => desk.request(path))
            expect(response.status).toBe(404)
            expect(response.headers.get("content-type")).toContain("application/json")
            expect(yield* Effect.promise(() => readJson(response))).toMatchObject({ ok: false, error: "not_found" })
          }
        }))
    })
  })
}
