import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { bodyKey } from "../Domain/BodyKey.ts"

/** Rows keyed a statement at a time: a bounded read of bodies however large the catalog. */
const BATCH = 500

/**
 * A body's key (src/Domain/BodyKey.ts) now sees through case, spacing, blank lines and invisible characters: a
 * listed body in capitals, with its lines re-indented or a zero-width space in a word, was listed again. Every key
 * is computed again, oldest listing first (in JavaScript: the normalization is Unicode's, which SQL cannot repeat
 * exactly); a later listing whose body is now a copy of an older one keeps its row and its sales without a key, as
 * 0008 left the copies listed before it. Rows without a key (the demo packet, those copies) stay without.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX handoffs_one_body`
  // A key is no part of a preview: no desk's preview cache needs word of it (0012's notice on every updated row
  // would send each listening desk one notification a handoff, a million of them at 1,000,000).
  yield* sql`ALTER TABLE handoffs DISABLE TRIGGER handoffs_changed_notice`
  let after = 0
  for (;;) {
    const rows = yield* sql<{ seq: string | number; body: string }>`SELECT seq, body FROM handoffs
      WHERE body_key IS NOT NULL AND seq > ${after} ORDER BY seq LIMIT ${BATCH}`
    if (rows.length === 0) break
    const seqs = rows.map((row) => Number(row.seq))
    const keys = rows.map((row) => bodyKey(row.body))
    yield* sql`UPDATE handoffs h SET body_key = k.key
      FROM unnest(${seqs}::bigint[], ${keys}::text[]) AS k(seq, key) WHERE h.seq = k.seq`
    after = seqs[seqs.length - 1]!
  }
  yield* sql`UPDATE handoffs h SET body_key = NULL
    WHERE h.body_key IS NOT NULL
      AND EXISTS (SELECT 1 FROM handoffs older WHERE older.body_key = h.body_key AND older.seq < h.seq)`
  yield* sql`ALTER TABLE handoffs ENABLE TRIGGER handoffs_changed_notice`
  yield* sql`CREATE UNIQUE INDEX handoffs_one_body ON handoffs (body_key)`
})
