import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Redacted, Schema } from "effect"
import { randomBytes } from "node:crypto"
import * as Postgres from "../../adapters/storage/Postgres.ts"
import { Catalog } from "../../src/Catalog.ts"
import { HandoffRepo } from "../../src/Catalog/HandoffRepo.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId, handoffSeq } from "../../src/Domain/Ids.ts"
import { AgentRepo } from "../../src/Identity/AgentRepo.ts"
import { Ledger } from "../../src/Ledger.ts"
import { PayoutRepo, type PayoutRow } from "../../src/Ledger/PayoutRepo.ts"
import { ReceiptRepo } from "../../src/Ledger/ReceiptRepo.ts"
import { Sales } from "../../src/Ledger/Sales.ts"
import { boughtBy, filedBy } from "../../src/Ledger/Tallies.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"

/**
 * The kept per-buyer and per-filer counts (buyer_tally, filer_tally) under writers that overlap: a decrement
 * beside an increment of the same row must wait for it (migration 0020). PostgreSQL only: the embedded store has
 * one connection, so no two transactions interleave there.
 */

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

const fileFor = (filer: DeskId, priceUsd = 0.5) =>
  Effect.flatMap(Catalog, (catalog) => catalog.file(filer, decodeFiling(filing(filer, { priceUsd })))).pipe(
    Effect.map((_) => _.id as string)
  )

const sealed = (id: string) =>
  Effect.flatMap(HandoffRepo, (repo) => repo.findSealed(Option.getOrThrow(handoffSeq(id)))).pipe(
    Effect.map(Option.getOrThrow)
  )

const postgres = DATABASE_URL === undefined
  ? Layer.die("DATABASE_URL is not set")
  : Layer.unwrapScoped(Effect.map(freshDatabaseUrl(DATABASE_URL), (url) => Postgres.layer(Redacted.make(url))))
const onPostgres = process.env.DESK_TEST_STORE === "postgres" && DATABASE_URL !== undefined

const layer = Layer.mergeAll(Sales.layer, PayoutRepo.layer, HandoffRepo.layer, AgentRepo.layer).pipe(
  Layer.provide([ReceiptRepo.layer, AgentRepo.layer]),
  Layer.provideMerge(servicesOn(postgres))
)

const keptAndCounted = (payer: string, filer: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ bought: number; sales: number; filed: number; handoffs: number }>`SELECT
      ${boughtBy(sql, payer)}::int AS bought,
      (SELECT count(*) FROM receipts WHERE payer = ${payer} AND kind = 'sale')::int AS sales,
      ${filedBy(sql, filer)}::int AS filed,
      (SELECT count(*) FROM handoffs WHERE filer_did = ${filer} AND NOT is_demo)::int AS handoffs`
    return row!
  }).pipe(Effect.orDie)

describe.skipIf(!onPostgres)("kept counters under concurrent writers (PostgreSQL)", () => {
  it.layer(layer, { timeout: 300_000 })((it) => {
    it.effect("a payout write on a buyer's only sale while it buys again leaves both sales in buyer_tally", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sales = yield* Sales
        const payouts = yield* PayoutRepo
        const filer = DeskId.make(newAgentId())
        const [first, second] = yield* Effect.all([fileFor(filer), fileFor(filer)])
        const payer = newAgentId()
        yield* (yield* AgentRepo).ensure(payer)

        // The buyer's first sale, paid by x402: its filer's share is a payout row the worker will send.
        const nonce = `0x${randomBytes(32).toString("hex")}`
        const transfer = { chainId: 84532, txHash: `0x${"ab".repeat(32)}`, logIndex: Math.floor(Math.random() * 1e9) }
        const receipt = yield* sql.withTransaction(sales.record({
          handoff: yield* sealed(first!),
          payer,
          payment: Option.some({
            transfer,
            payerAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
            nonce,
            fromBlock: 7n
          })
        }))
        yield* sql`UPDATE payouts SET status = 'pending', to_address = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
          WHERE receipt_id = ${receipt.receipt_id}`
        yield* sql`UPDATE receipts SET payout_status = 'pending' WHERE receipt_id = ${receipt.receipt_id}`
        expect(yield* keptAndCounted(payer, filer)).toMatchObject({ bought: 1, sales: 1 })
        const lease = { row: Option.getOrThrow(yield* payouts.claimDue(60, "token-a")), token: "token-a" }
        expect(lease.row.receipt_id).toBe(receipt.receipt_id)

        // The buyer's second purchase is in flight: its receipt is written (buyer_tally: 2), not yet committed.
        const written = yield* Deferred.make<void>()
        const secondSale = sql.withTransaction(Effect.gen(function*() {
          yield* sales.record({ handoff: yield* sealed(second!), payer, payment: Option.none() })
          yield* Deferred.succeed(written, undefined)
          yield* sleep(500)
        }))
        const buying = yield* Effect.fork(Effect.orDie(secondSale))
        yield* Deferred.await(written)
        // Meanwhile the payout worker records the first sale's payout as sent (PayoutRepo.markSent).
        const sending = yield* Effect.fork(payouts.markSent(lease, `0x${"cd".repeat(32)}`))
        yield* Fiber.join(buying)
        expect(yield* Fiber.join(sending)).toBe(true)

        // Two sales in the receipts; the kept count must say two.
        const after = yield* keptAndCounted(payer, filer)
        expect(after.sales).toBe(2)
        expect(after.bought).toBe(after.sales)
      }))

    it.effect("an operator's tag edit of a filer's only handoff while it files again leaves both filings in filer_tally", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const filer = DeskId.make(newAgentId())
        const first = yield* fileFor(filer)
        const payer = newAgentId()
        expect(yield* keptAndCounted(payer, filer)).toMatchObject({ filed: 1, handoffs: 1 })

        // The filer's second filing is in flight: filed (filer_tally: 2), not yet committed.
        const filed = yield* Deferred.make<void>()
        const secondFiling = sql.withTransaction(Effect.gen(function*() {
          yield* fileFor(filer)
          yield* Deferred.succeed(filed, undefined)
          yield* sleep(500)
        }))
        const filing = yield* Effect.fork(Effect.orDie(secondFiling))
        yield* Deferred.await(filed)
        // Meanwhile an operator changes the first handoff's tags (docs: an operator may edit a handoff).
        const seq = Number(first!.replace("DESK-", ""))
        const editing = yield* Effect.fork(Effect.orDie(sql`UPDATE handoffs SET tags = ARRAY['ruby', 'edited']
          WHERE seq = ${seq}`))
        yield* Fiber.join(filing)
        yield* Fiber.join(editing)

        const after = yield* keptAndCounted(payer, filer)
        expect(after.handoffs).toBe(2)
        expect(after.filed).toBe(after.handoffs)
      }))

    // The same race with no transaction held open by the test: real desk-receipt unlocks (desk_unlock, one
    // statement) of each buyer's second handoff beside the payout worker's real writes (storeSigned, then markSent)
    // for its first, x402, sale. Before 0020 it lost an increment for 4-13 of 60 buyers a run.
    it.effect("each buyer's kept sales equal its sale receipts after unlocks race payout writes", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const sales = yield* Sales
        const payouts = yield* PayoutRepo
        const ledger = yield* Ledger
        const filer = DeskId.make(newAgentId())
        const N = 60
        const firsts = yield* Effect.all(Array.from({ length: N }, () => fileFor(filer)), { concurrency: 8 })
        const seconds = yield* Effect.all(Array.from({ length: N }, () => fileFor(filer)), { concurrency: 8 })
        const payers = Array.from({ length: N }, () => newAgentId())
        const leases = new Map<string, { row: PayoutRow; token: string }>()
        for (let i = 0; i < N; i++) {
          yield* (yield* AgentRepo).ensure(payers[i]!)
          const receipt = yield* sql.withTransaction(sales.record({
            handoff: yield* sealed(firsts[i]!),
            payer: payers[i]!,
            payment: Option.some({
              transfer: {
                chainId: 84532,
                txHash: `0x${"ab".repeat(32)}`,
                logIndex: i + Math.floor(Math.random() * 1e9)
              },
              payerAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
              nonce: `0x${randomBytes(32).toString("hex")}`,
              fromBlock: 7n
            })
          }))
          yield* sql`UPDATE payouts SET status = 'pending', to_address = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
            WHERE receipt_id = ${receipt.receipt_id}`
          const lease = { row: Option.getOrThrow(yield* payouts.claimDue(600, `t${i}`)), token: `t${i}` }
          expect(lease.row.receipt_id).toBe(receipt.receipt_id)
          leases.set(payers[i]!, lease)
        }
        const txHash = (i: number) => `0x${i.toString(16).padStart(64, "0")}`
        yield* Effect.all(
          payers.flatMap((payer, i) => [
            Effect.ignore(ledger.unlock(DeskId.make(payer), seconds[i]!, DeskId.make(payer), Option.none())),
            Effect.flatMap(
              payouts.storeSigned(leases.get(payer)!, { signedTx: "0x01", txHash: txHash(i), txNonce: i }),
              () => payouts.markSent(leases.get(payer)!, txHash(i))
            )
          ]),
          { concurrency: 16 }
        )
        const mismatched = yield* sql`SELECT r.payer, count(*)::int AS receipts, b.sales::int AS kept
          FROM receipts r LEFT JOIN buyer_tally b USING (payer)
          WHERE r.kind = 'sale' GROUP BY r.payer, b.sales HAVING count(*) <> coalesce(b.sales, 0)`
        expect(mismatched).toEqual([])
      }))
  })
})
