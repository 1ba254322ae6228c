import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { TRIMMED_CHARACTERS } from "../Domain/BodyKey.ts"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The SHA-256 of the normalized body (src/Domain/BodyKey.ts): a unique index lets one handoff list a body,
  // however many desks or concurrent filings try. The demo packet has none: its body is reserved in code.
  yield* sql`ALTER TABLE handoffs ADD COLUMN body_key text`
  // Bodies listed twice before this rule keep their rows: the oldest holds the key, later copies hold none.
  yield* sql`UPDATE handoffs h SET body_key = keyed.key
    FROM (
      SELECT DISTINCT ON (key) seq, key FROM (
        SELECT seq, encode(sha256(convert_to(
          btrim(replace(replace(body, ${"\r\n"}, ${"\n"}), ${"\r"}, ${"\n"}), ${TRIMMED_CHARACTERS}), 'UTF8')), 'hex') AS key
        FROM handoffs WHERE NOT is_demo
      ) AS all_keys
      ORDER BY key, seq
    ) AS keyed
    WHERE h.seq = keyed.seq`
  yield* sql`CREATE UNIQUE INDEX handoffs_one_body ON handoffs (body_key)`
})
