import { Migrator, SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { bodyKey } from "../../src/Domain/BodyKey.ts"
import { migrations } from "../../src/Migrations/index.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { filing, newAgentId, uniqueBody } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"

const send = (path: string, init: RequestInit & { json?: unknown; agent?: string } = {}) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, init)
      return { status: response.status, json: await readJson(response) }
    }))

const fileAs = (agent: string, overrides: Record<string, unknown>) =>
  send("/api/handoffs", { json: filing(agent, overrides), agent })

const rowsWithBody = (body: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ n: string | number }>`SELECT count(*) AS n FROM handoffs WHERE body = ${body}`
  ).pipe(
    Effect.map((rows) => Number(rows[0]!.n)),
    Effect.orDie
  )

const TABLE = "desk_migrations"
const before0008 = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0008"))

/** Whitespace and line endings a copy may differ by; the key must see through them, in SQL as in JavaScript. */
const VARIANTS = (body: string) => [
  body,
  body.replace(/\n/g, "\r\n"),
  `\u00a0 ${body.replace(/\n/g, "\r")}\t\u3000\ufeff`
]

/**
 * What else a reseller changes that no reader would call another body: case, spacing inside and at the end of
 * lines, blank lines, a zero-width space inside a word, full-width letters (an outside recheck listed each of
 * the first five again).
 */
const EDITS = (body: string) => [
  body.toUpperCase(),
  body.replace(/\n/g, "   \n"),
  body.replace(/\n/g, "\n\n\n"),
  body.replace(/- /g, "-\t"),
  body.replace(/(\w{3})(\w)/, "$1\u200b$2"),
  body.replace(/[a-z]/, (letter) => String.fromCodePoint(letter.codePointAt(0)! - 0x61 + 0xff41))
]

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`one body, one listing, over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("a copy of a listed body is a 409 duplicate_body naming the listing, whatever its whitespace", () =>
        Effect.gen(function*() {
          const body = uniqueBody()
          const first = yield* fileAs(newAgentId(), { body })
          expect(first.status).toBe(201)
          for (const copy of VARIANTS(body)) {
            const again = yield* fileAs(newAgentId(), { body: copy, title: "A reseller's title" })
            expect(again.status).toBe(409)
            expect(again.json).toMatchObject({ ok: false, error: "duplicate_body", duplicateOf: first.json.id })
            expect(again.json.message).toContain(first.json.id)
          }
          for (const [index, copy] of EDITS(body).entries()) {
            expect(copy, `edit ${index}`).not.toBe(body)
            const edited = yield* fileAs(newAgentId(), { body: copy, title: "A reseller's title" })
            expect(edited.status, `edit ${index}`).toBe(409)
            expect(edited.json.duplicateOf).toBe(first.json.id)
          }
          // The filer itself cannot list its body twice either; a changed body is a new handoff.
          expect((yield* fileAs(first.json.filerDid, { body })).status).toBe(409)
          const changed = yield* fileAs(newAgentId(), { body: `${body}\nOne more finding.` })
          expect(changed.status).toBe(201)
          // The copies refused drew no id: the next filing takes the next one (each refused copy left a gap before).
          const seqOf = (id: string) => Number(id.slice("DESK-".length))
          expect(seqOf(changed.json.id)).toBe(seqOf(first.json.id) + 1)
          expect(yield* rowsWithBody(body)).toBe(1)
        }))

      it.effect("the free example's body (also the demo packet's) is refused, saying which", () =>
        Effect.gen(function*() {
          const example = yield* send("/api/example")
          const demo = (yield* send("/api/sandbox")).json.handoffId
          const copy = yield* fileAs(newAgentId(), { body: example.json.body })
          expect(copy.status).toBe(409)
          expect(copy.json).toMatchObject({ error: "duplicate_body", duplicateOf: "EXAMPLE" })
          expect(copy.json.message).toContain("free example")
          expect(copy.json.message).toContain(`demo packet ${demo}`)
          expect(yield* rowsWithBody(example.json.body)).toBe(1)
        }))

      it.effect("concurrent filings of one body: exactly one is listed, every other is told which", () =>
        Effect.gen(function*() {
          const body = uniqueBody()
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) => fileAs(newAgentId(), { body, title: `Racer ${i}` })),
            { concurrency: "unbounded" }
          )
          const listed = answers.filter((_) => _.status === 201)
          expect(listed).toHaveLength(1)
          const refused = answers.filter((_) => _.status === 409)
          expect(refused).toHaveLength(7)
          for (const answer of refused) expect(answer.json.duplicateOf).toBe(listed[0]!.json.id)
          expect(yield* rowsWithBody(body)).toBe(1)
        }))
    })

    it.effect("the migration keys a database that already lists copies, without failing", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* Migrator.make({})({ loader: Migrator.fromRecord(before0008), table: TABLE })
        const body = uniqueBody()
        const insert = (text: string, isDemo = false) =>
          sql<{ seq: string | number }>`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro,
              reconstruct_micro, origin, is_demo, hash, body_chars)
            VALUES ('t', 't', ${text}, 'f', ${newAgentId()}, 1, 2, 'filed', ${isDemo}, 'h', 1) RETURNING seq`.pipe(
            Effect.map((rows) => Number(rows[0]!.seq))
          )
        const seqs = []
        for (const copy of VARIANTS(body)) seqs.push(yield* insert(copy))
        const demo = yield* insert(body, true)

        yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: TABLE })
        const rows = yield* sql<
          { seq: string | number; body_key: string | null }
        >`SELECT seq, body_key FROM handoffs ORDER BY seq`
        const keyOf = (seq: number) => rows.find((_) => Number(_.seq) === seq)!.body_key
        expect(keyOf(seqs[0]!)).toBe(bodyKey(body))
        // SQL's normalization agrees with the desk's, so the copies were seen as copies and kept without a key.
        expect(VARIANTS(body).map(bodyKey)).toEqual(VARIANTS(body).map(() => bodyKey(body)))
        expect(seqs.slice(1).map(keyOf)).toEqual([null, null])
        expect(keyOf(demo)).toBeNull()
        const another = yield* Effect.either(
          insert(`${body}`).pipe(
            Effect.zipRight(sql`UPDATE handoffs SET body_key = ${bodyKey(body)} WHERE body_key IS NULL AND NOT is_demo`)
          )
        )
        expect(another._tag).toBe("Left")
      }).pipe(Effect.provide(backend.layer), Effect.scoped), { timeout: 120_000 })

    it.effect(
      "the migration to keys that see through case and spacing keeps the oldest listing's key",
      () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const before0030 = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0030"))
          yield* Migrator.make({})({ loader: Migrator.fromRecord(before0030), table: TABLE })
          const body = uniqueBody()
          // Keys as the rule before 0030 made them: each of these bodies had its own.
          const oldKey = (text: string) =>
            createHash("sha256").update(text.replace(/\r\n?/g, "\n").trim()).digest("hex")
          const insert = (text: string) =>
            sql<{ seq: string | number }>`INSERT INTO handoffs (title, teaser, body, filer, filer_did, price_micro,
              reconstruct_micro, origin, is_demo, hash, body_chars, body_key)
            VALUES ('t', 't', ${text}, 'f', ${newAgentId()}, 1, 2, 'filed', false, 'h', 1, ${oldKey(text)})
            RETURNING seq`.pipe(Effect.map((rows) => Number(rows[0]!.seq)))
          const original = yield* insert(body)
          const copies = [yield* insert(body.toUpperCase()), yield* insert(body.replace(/\n/g, "\n\n"))]
          const other = yield* insert(uniqueBody())

          yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: TABLE })
          const rows = yield* sql<{ seq: string | number; body_key: string | null; body: string }>`
          SELECT seq, body_key, body FROM handoffs`
          const keyOf = (seq: number) => rows.find((_) => Number(_.seq) === seq)!.body_key
          expect(keyOf(original)).toBe(bodyKey(body))
          expect(copies.map(keyOf)).toEqual([null, null])
          expect(keyOf(other)).toBe(bodyKey(rows.find((_) => Number(_.seq) === other)!.body))
          // The change notice (preview caches across desks) was held only while keys were written.
          const notice = yield* sql<{ tgenabled: string }>`SELECT tgenabled FROM pg_trigger
          WHERE tgname = 'handoffs_changed_notice'`
          expect(notice.map((_) => _.tgenabled)).toEqual(["O"])
          // The unique key holds again: a copy cannot take the original's key.
          const taken = yield* Effect.either(
            sql`UPDATE handoffs SET body_key = ${bodyKey(body)} WHERE seq = ${copies[0]!}`
          )
          expect(taken._tag).toBe("Left")
        }).pipe(Effect.provide(backend.layer), Effect.scoped),
      { timeout: 120_000 }
    )
  })
}
