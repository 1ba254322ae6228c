import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Generated columns need IMMUTABLE functions; array_to_string is only STABLE.
  yield* sql`CREATE FUNCTION desk_join_words(words text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT coalesce(array_to_string(words, ' '), '') $$`
  yield* sql`CREATE SEQUENCE handoff_seq`
  yield* sql`CREATE TABLE handoffs (
    seq bigint PRIMARY KEY DEFAULT nextval('handoff_seq'),
    title text NOT NULL,
    teaser text NOT NULL,
    body text NOT NULL,
    filer text NOT NULL,
    filer_did text NOT NULL,
    price_micro bigint NOT NULL CHECK (price_micro >= 1),
    reconstruct_micro bigint NOT NULL,
    minutes double precision,
    tags text[] NOT NULL DEFAULT '{}',
    contains text[] NOT NULL DEFAULT '{}',
    does_not_contain text[] NOT NULL DEFAULT '{}',
    why_pay text NOT NULL DEFAULT '',
    provenance jsonb,
    origin text NOT NULL CHECK (origin IN ('filed', 'seed')),
    is_demo boolean NOT NULL DEFAULT false,
    hash text NOT NULL,
    body_chars integer NOT NULL,
    purchases integer NOT NULL DEFAULT 0 CHECK (purchases >= 0),
    useful integer NOT NULL DEFAULT 0 CHECK (useful >= 0),
    not_useful integer NOT NULL DEFAULT 0 CHECK (not_useful >= 0),
    filed_at timestamptz NOT NULL DEFAULT now(),
    savings_micro bigint GENERATED ALWAYS AS (reconstruct_micro - price_micro) STORED,
    vendor text GENERATED ALWAYS AS (lower(provenance ->> 'vendor')) STORED,
    search tsvector GENERATED ALWAYS AS (
      setweight(to_tsvector('english', title), 'A') ||
      setweight(to_tsvector('english', desk_join_words(tags)), 'B') ||
      setweight(to_tsvector('english', teaser), 'C') ||
      setweight(to_tsvector('english', desk_join_words(contains)), 'D')
    ) STORED,
    CHECK (reconstruct_micro > price_micro)
  )`
  yield* sql`CREATE INDEX handoffs_search ON handoffs USING gin (search)`
  yield* sql`CREATE INDEX handoffs_tags ON handoffs USING gin (tags)`
  yield* sql`CREATE INDEX handoffs_recent ON handoffs (filed_at DESC, seq DESC)`
  yield* sql`CREATE INDEX handoffs_savings ON handoffs (savings_micro DESC, seq DESC)`
  yield* sql`CREATE INDEX handoffs_vendor ON handoffs (vendor)`
  yield* sql`CREATE UNIQUE INDEX handoffs_one_demo ON handoffs (is_demo) WHERE is_demo`
})
