import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import { randomBytes } from "node:crypto"
import { Catalog } from "../../src/Catalog.ts"
import { HandoffRepo } from "../../src/Catalog/HandoffRepo.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId, handoffSeq } from "../../src/Domain/Ids.ts"
import { AgentRepo } from "../../src/Identity/AgentRepo.ts"
import { PayoutRepo } from "../../src/Ledger/PayoutRepo.ts"
import { ReceiptRepo } from "../../src/Ledger/ReceiptRepo.ts"
import { Sales } from "../../src/Ledger/Sales.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

const signed = (n: number) => ({ signedTx: `0x0${n}`, txHash: `0x${String(n).repeat(64)}`, txNonce: n })

/** An x402 sale's receipt with a payout row due now, as the receipt writer makes it. */
const duePayout = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const filer = DeskId.make(newAgentId())
  const preview = yield* (yield* Catalog).file(
    filer,
    Schema.decodeUnknownSync(FilingRequest)(filing(filer, { priceUsd: 0.5 }))
  )
  const handoff = Option.getOrThrow(yield* (yield* HandoffRepo).findSealed(Option.getOrThrow(handoffSeq(preview.id))))
  const transfer = { chainId: 84532, txHash: `0x${"ab".repeat(32)}`, logIndex: Math.floor(Math.random() * 1e9) }
  const payer = newAgentId()
  yield* (yield* AgentRepo).ensure(payer)
  const nonce = `0x${randomBytes(32).toString("hex")}`
  const receipt = yield* sql.withTransaction((yield* Sales).record({
    handoff,
    payer,
    payment: Option.some({ transfer, payerAddress: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8", nonce, fromBlock: 7n })
  }))
  // No desk wallet in this layer: the payout is owed; give it an address and make it due.
  yield* sql`UPDATE payouts SET status = 'pending', to_address = '0x90F79bf6EB2c4f870365E785982E1f101E93b906'
    WHERE receipt_id = ${receipt.receipt_id}`
  return receipt.receipt_id
})

const stateOf = (receiptId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`SELECT p.status, p.tx_hash, r.payout_status FROM payouts p JOIN receipts r USING (receipt_id)
      WHERE receipt_id = ${receiptId}`
  ).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

const layer = <E>(storage: Parameters<typeof servicesOn<E>>[0]) =>
  Layer.mergeAll(Sales.layer, PayoutRepo.layer, HandoffRepo.layer, AgentRepo.layer).pipe(
    Layer.provide([ReceiptRepo.layer, AgentRepo.layer]),
    Layer.provideMerge(servicesOn(storage))
  )

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`payout leases over ${backend.name}`, () => {
    it.layer(layer(backend.layer), { timeout: 120_000 })((it) => {
      it.effect("a worker whose lease lapsed writes nothing, and no write turns `sent` back", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const repo = yield* PayoutRepo
          const receiptId = yield* duePayout
          const slow = { row: Option.getOrThrow(yield* repo.claimDue(60, "token-slow")), token: "token-slow" }
          expect(slow.row.receipt_id).toBe(receiptId)
          expect(slow.row.from_block).toBe(7)
          // Held: nobody else can claim it.
          expect(yield* repo.claimDue(60, "token-other")).toEqual(Option.none())

          // The slow worker's lease lapses and another worker claims the payout under a new token.
          yield* sql`UPDATE payouts SET next_attempt_at = now() - interval '1 second' WHERE receipt_id = ${receiptId}`
          const fast = { row: Option.getOrThrow(yield* repo.claimDue(60, "token-fast")), token: "token-fast" }
          expect(yield* repo.renew(slow, 60)).toBe(false)
          expect(yield* repo.storeSigned(slow, signed(1))).toBe(false)
          expect(yield* repo.storeSigned(fast, signed(2))).toBe(true)
          expect(yield* repo.markSent(fast, signed(2).txHash)).toBe(true)

          // Late writes from either worker: refused, and the payout stays sent with its one transaction.
          expect(yield* repo.markFailed(slow, "late", 1)).toBe(false)
          expect(yield* repo.markSent(slow, signed(1).txHash)).toBe(false)
          expect(yield* repo.markFailed(fast, "late", 1)).toBe(false)
          expect(yield* repo.discardSigned(fast)).toBe(false)
          expect(yield* repo.retryLater(fast, 1)).toBe(false)
          expect(yield* stateOf(receiptId)).toEqual({
            status: "sent",
            tx_hash: signed(2).txHash,
            payout_status: "sent"
          })
          yield* sql`UPDATE payouts SET next_attempt_at = now() - interval '1 second' WHERE receipt_id = ${receiptId}`
          expect(yield* repo.claimDue(60, "token-third")).toEqual(Option.none())
        }))

      it.effect("one on-chain transfer backs one receipt: a second receipt naming it is refused by the database", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const first = yield* duePayout
          const [row] =
            yield* sql`SELECT payment_chain_id, payment_tx_hash, payment_log_index FROM receipts WHERE receipt_id = ${first}`
          const copied = yield* Effect.flip(
            sql`UPDATE receipts SET payment_chain_id = ${row!["payment_chain_id"] as string},
              payment_tx_hash = ${row!["payment_tx_hash"] as string}, payment_log_index = ${row![
              "payment_log_index"
            ] as number}
            WHERE receipt_id = (SELECT receipt_id FROM receipts WHERE receipt_id <> ${first} AND mode = 'x402' LIMIT 1)`
          )
          expect((copied.cause as { code?: string }).code).toBe("23505")
        }))
    })
  })
}
