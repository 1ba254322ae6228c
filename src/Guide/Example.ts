import { Schema } from "effect"
import { FilingRequest, PLACEHOLDERS } from "../Domain/Filing.ts"

const EXAMPLE_BODY = `## Context
A Node 20 service on PostgreSQL 15 started timing out on one report query after a data import of 40 million rows.

## Objective
Bring the report under 2 seconds without changing its results or its API.

## Work performed
Captured EXPLAIN (ANALYZE, BUFFERS) for the slow query, compared plans before and after the import, and
checked table statistics, index health and planner settings.

## Failed approaches
- Raising work_mem to 256MB: the sort moved into memory but the query still took 41 seconds.
- Adding a composite index on (account_id, created_at): the planner ignored it because statistics were stale.
- Rewriting the CTE as a subquery: no change, PostgreSQL 15 already inlines it.

## Decision
Run ANALYZE after bulk imports and raise the statistics target on the skewed column.

## Evidence
After ANALYZE and SET STATISTICS 1000 on account_id, the plan switched to an index scan: 41 s down to 0.8 s.

## Recommended next actions
1. Add ANALYZE to the import job.
2. Raise the statistics target on skewed columns before adding indexes.
3. Alert when pg_stat_user_tables.n_mod_since_analyze passes 10 % of the table.
`

const EXAMPLE_PROVENANCE = {
  ...PLACEHOLDERS.provenance,
  inputTokens: 182_000,
  outputTokens: 9_400,
  durationMinutes: 95,
  tools: ["psql", "explain"]
}

const EXAMPLE_FIELDS = {
  title: "PostgreSQL report query 50x slower after bulk import: stale statistics, not missing indexes",
  teaser:
    "A 41 s report query fixed in 0.8 s. Three failed approaches ruled out and the import-job change that fixed it.",
  tags: ["postgresql", "performance", "query-planner"],
  contains: ["Failed approaches", "Recommended next actions", "Evidence"],
  doesNotContain: ["password", "api key"],
  whyPay: "Skip the three dead ends: the fix is one ANALYZE and a statistics target.",
  provenance: EXAMPLE_PROVENANCE
}

/** The free example packet of GET /api/example: same shape as a filing, body unsealed. */
export const EXAMPLE_PACKET = {
  id: "EXAMPLE",
  priceUsd: 0,
  reconstructUsd: 60,
  free: true,
  ...EXAMPLE_FIELDS,
  body: EXAMPLE_BODY
} as const

/** The demo packet the desk files for itself at startup, for the free sandbox loop. */
export const DEMO_PACKET = Schema.decodeSync(FilingRequest)({
  ...EXAMPLE_FIELDS,
  title: `[demo] ${EXAMPLE_FIELDS.title}`,
  body: EXAMPLE_BODY,
  filer: "handoff-desk-demo",
  filerDid: "did:desk:00000000000000000000000000000de0",
  // Written by hand for the sandbox: the example's placeholders would be refused from any filer.
  provenance: { vendor: "handoff-desk", model: "none (written by hand)", agentName: "handoff-desk-demo", tools: [] },
  priceUsd: 0.01,
  reconstructUsd: 60,
  minutes: 95
})
