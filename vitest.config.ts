import { defineConfig } from "vitest/config"

/** The suites that run over storage: once on PGlite, once on PostgreSQL (skipped without DATABASE_URL). */
const STORAGE_SUITES = [
  "test/catalog/Filing.test.ts",
  "test/catalog/Discover.test.ts",
  "test/catalog/SearchTotals.test.ts",
  "test/catalog/SortIndexes.test.ts",
  "test/catalog/TagListing.test.ts",
  "test/catalog/Duplicates.test.ts",
  "test/catalog/PreviewCache.test.ts",
  "test/catalog/PreviewCacheAcrossDesks.test.ts",
  "test/catalog/PreviewsTogether.test.ts",
  "test/catalog/SaleNotices.test.ts",
  "test/catalog/DeepPagesHttp.test.ts",
  "test/catalog/ListingBudget.test.ts",
  "test/catalog/DeepPageRows.test.ts",
  "test/ledger/**/*.test.ts",
  "test/sandbox/**/*.test.ts",
  "test/mcp/**/*.test.ts",
  "test/owner/**/*.test.ts",
  "test/hostile/**/*.test.ts",
  "test/process/Crash.test.ts",
  "test/storage/StatementTimeout.test.ts",
  "test/storage/PreparedStatements.test.ts",
  "test/storage/CancelledStatements.test.ts",
  "test/storage/PlannerStatistics.test.ts",
  "test/x402/{Purchase,Attacks,Faults,Crash,FrontRun,TwoDesks,Kills,Randomized,Audit,PaymentIds,SignIn,OfferReceipt,NonceReuse,PayoutLaggingNode}.test.ts"
]

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: { name: "pglite", include: ["test/**/*.test.ts"], env: { DESK_TEST_STORE: "pglite" } }
      },
      {
        extends: true,
        test: { name: "postgres", include: STORAGE_SUITES, env: { DESK_TEST_STORE: "postgres" } }
      }
    ]
  }
})
