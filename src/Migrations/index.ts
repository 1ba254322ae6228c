import { Migrator } from "@effect/sql"
import catalog from "./0001_catalog.ts"
import ledger from "./0002_ledger.ts"
import settlement from "./0003_settlement.ts"
import searchIndexes from "./0004_search_indexes.ts"
import hotUpdates from "./0005_hot_updates.ts"
import moneySafety from "./0006_money_safety.ts"
import boundedQueries from "./0007_bounded_queries.ts"
import bodyKeys from "./0008_body_keys.ts"
import paymentIds from "./0009_payment_ids.ts"
import siwxNonces from "./0010_siwx_nonces.ts"
import keptCounters from "./0011_kept_counters.ts"
import handoffNotices from "./0012_handoff_notices.ts"
import oneTripUnlock from "./0013_one_trip_unlock.ts"
import salesUnannounced from "./0014_sales_unannounced.ts"
import byFiler from "./0015_by_filer.ts"
import quietStatistics from "./0016_quiet_statistics.ts"
import agentTallies from "./0017_agent_tallies.ts"
import voteCounts from "./0018_vote_counts.ts"
import tagListing from "./0019_tag_listing.ts"
import tallyLocks from "./0020_tally_locks.ts"
import noTruncate from "./0021_no_truncate.ts"
import noncePerWallet from "./0022_nonce_per_wallet.ts"
import filersKnown from "./0023_filers_known.ts"
import refusalsWriteNothing from "./0024_refusals_write_nothing.ts"
import payoutSignaturesOnce from "./0025_payout_signatures_once.ts"
import unboundedSums from "./0026_unbounded_sums.ts"
import salesKeptApart from "./0027_sales_kept_apart.ts"
import unlocksTogether from "./0028_unlocks_together.ts"
import fairReconciler from "./0029_fair_reconciler.ts"
import copiesByTheirWords from "./0030_copies_by_their_words.ts"

/** Every migration, by file name; a test checks this registry against the directory. */
export const migrations = {
  "0001_catalog": catalog,
  "0002_ledger": ledger,
  "0003_settlement": settlement,
  "0004_search_indexes": searchIndexes,
  "0005_hot_updates": hotUpdates,
  "0006_money_safety": moneySafety,
  "0007_bounded_queries": boundedQueries,
  "0008_body_keys": bodyKeys,
  "0009_payment_ids": paymentIds,
  "0010_siwx_nonces": siwxNonces,
  "0011_kept_counters": keptCounters,
  "0012_handoff_notices": handoffNotices,
  "0013_one_trip_unlock": oneTripUnlock,
  "0014_sales_unannounced": salesUnannounced,
  "0015_by_filer": byFiler,
  "0016_quiet_statistics": quietStatistics,
  "0017_agent_tallies": agentTallies,
  "0018_vote_counts": voteCounts,
  "0019_tag_listing": tagListing,
  "0020_tally_locks": tallyLocks,
  "0021_no_truncate": noTruncate,
  "0022_nonce_per_wallet": noncePerWallet,
  "0023_filers_known": filersKnown,
  "0024_refusals_write_nothing": refusalsWriteNothing,
  "0025_payout_signatures_once": payoutSignaturesOnce,
  "0026_unbounded_sums": unboundedSums,
  "0027_sales_kept_apart": salesKeptApart,
  "0028_unlocks_together": unlocksTogether,
  "0029_fair_reconciler": fairReconciler,
  "0030_copies_by_their_words": copiesByTheirWords
}

export const loader = Migrator.fromRecord(migrations)
