// `npm run audit`: reconciles the desk's database with the chain, configured by the desk's own environment.
import { SqlClient } from "@effect/sql"
import { Config, Effect, Layer, Option } from "effect"
import { audit, type AuditReport } from "../adapters/settlement/X402Audit.ts"
import { x402Settings } from "../adapters/settlement/X402Config.ts"
import { StoreLive } from "../src/Adapters.ts"
import { DeskConfig } from "../src/Config.ts"
import { AuditRepo } from "../src/Ledger/AuditRepo.ts"

const AUDITED_SCHEMA = 6

// The store is the one src/main.ts runs on (src/Adapters.ts), not migrated: the audit reads a database as it is.
// An embedded store a desk is running on is refused by its directory's lock (adapters/storage/DataDirLock.ts), which
// names that desk; a desk answering at DESK_PUBLIC_URL on another directory is none of the audit's business.

class Refused extends Error {}

const print = (report: AuditReport) => {
  for (const line of report.discrepancies) console.log(`discrepancy: ${line}`)
  for (const line of report.notes) console.log(`note: ${line}`)
  for (const line of report.summary) console.log(line)
  console.log(
    report.discrepancies.length === 0
      ? "audit: the ledger and the chain agree"
      : `audit: ${report.discrepancies.length} discrepanc${report.discrepancies.length === 1 ? "y" : "ies"}`
  )
}

const schemaIsCurrent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT max(migration_id) AS latest FROM desk_migrations`.pipe(
    Effect.orElseSucceed(() => [{ latest: null }])
  )
  if (Number(rows[0]?.["latest"] ?? 0) < AUDITED_SCHEMA) {
    return yield* Effect.fail(
      new Refused("the database holds no desk, or an older one: start the desk once so it migrates, then audit")
    )
  }
})

const main = Effect.gen(function*() {
  const rpc = yield* Config.string("DESK_CHAIN_RPC_URL").pipe(
    Config.option,
    Config.map(Option.filter((_) => _.trim() !== ""))
  )
  if (Option.isNone(rpc)) {
    return yield* Effect.fail(
      new Refused("DESK_CHAIN_RPC_URL is not set: a desk without a chain moves no USDC, so there is nothing to audit")
    )
  }
  const settings = yield* x402Settings
  const report = yield* Effect.gen(function*() {
    yield* schemaIsCurrent
    return yield* audit(settings, yield* (yield* AuditRepo).snapshot)
  }).pipe(Effect.provide(AuditRepo.layer.pipe(Layer.provideMerge(StoreLive))))
  print(report)
  return report.discrepancies.length === 0 ? 0 : 1
}).pipe(Effect.provide(DeskConfig.layer))

Effect.runPromise(Effect.either(main)).then((result) => {
  if (result._tag === "Right") {
    process.exitCode = result.right
    return
  }
  const error = result.left
  const message = String((error as { message?: unknown }).message ?? error).split("\n")[0]
  const reason = error instanceof Refused
    ? error.message
    : /is in use by another desk/.test(message)
    ? `${
      message.replace(/; stop it, or give this desk.*$/, "")
    }: stop it, then run the audit (or run desks on PostgreSQL, which the audit reads while they run)`
    : /PGlite/.test(message)
    ? `cannot open the embedded store (${message}): if a desk is running on DESK_DATA_DIR, stop it first; it takes one process at a time`
    : `cannot audit: ${message}`
  process.stderr.write(`handoff-desk audit: ${reason}\n`)
  process.exitCode = 2
}, (defect: unknown) => {
  process.stderr.write(`handoff-desk audit: cannot audit: ${String(defect).split("\n")[0]}\n`)
  process.exitCode = 2
})
