import type { SqlClient } from "@effect/sql"
import { expect } from "@effect/vitest"
import { Effect } from "effect"
import { audit } from "../../../adapters/settlement/X402Audit.ts"
import { AuditRepo } from "../../../src/Ledger/AuditRepo.ts"
import { TestChain, type TestChainShape } from "./Chain.ts"

/** `npm run audit`'s check over this suite's database, reading the chain directly (past the proxy's faults). */
export const auditOf = ({ chain, settings }: TestChainShape) =>
  Effect.flatMap(AuditRepo, (repo) => repo.snapshot).pipe(
    Effect.flatMap((db) => audit({ ...settings, rpcUrl: chain.rpcUrl }, db)),
    Effect.provide(AuditRepo.layer),
    Effect.orDie
  )

/**
 * The audit finds nothing: the ledger and the chain agree. A payout the background worker is finishing can be
 * mined a moment before it is recorded sent, so a few audits a short while apart get to see it settle.
 */
export const expectAuditPasses: Effect.Effect<void, never, TestChain | SqlClient.SqlClient> = Effect.gen(function*() {
  const testChain = yield* TestChain
  let report = yield* auditOf(testChain)
  for (let tries = 0; report.discrepancies.length > 0 && tries < 20; tries++) {
    yield* Effect.sleep("250 millis")
    report = yield* auditOf(testChain)
  }
  expect(report.discrepancies).toEqual([])
})
