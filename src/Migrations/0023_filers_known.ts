import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Every filer is an agent the desk knows. A filing registers its filer (src/Catalog.ts locks the agent's row),
 * but seeded listings and the demo packet are inserted for filers that never called, so their preview pages
 * linked to an owner page, and named a `GET /api/agents/:id`, that answered 404 "neither filed nor bought".
 * One statement-level trigger (a bulk seed pays one insert, not one per row) and one backfill.
 */
export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION know_filers() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO agents (id) SELECT DISTINCT filer_did FROM filed ORDER BY 1 ON CONFLICT (id) DO NOTHING;
      RETURN NULL;
    END $$`
  yield* sql`CREATE TRIGGER handoffs_filers_known AFTER INSERT ON handoffs
    REFERENCING NEW TABLE AS filed FOR EACH STATEMENT EXECUTE FUNCTION know_filers()`
  yield* sql`INSERT INTO agents (id) SELECT DISTINCT filer_did FROM handoffs ORDER BY 1 ON CONFLICT (id) DO NOTHING`
})
