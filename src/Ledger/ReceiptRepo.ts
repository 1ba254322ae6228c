import { SqlClient, SqlSchema } from "@effect/sql"
import { Context, Effect, Exit, FiberSet, Layer, Option, Schema } from "effect"
import { boarding } from "../Boarding.ts"
import { DbInt, DbSum } from "../Domain/DbTypes.ts"
import { isRefusedStatement } from "../Sql.ts"
import { listReceipts, RECEIPT_COLUMNS, type ReceiptFilter } from "./ReceiptListing.ts"
import { type NewReceipt, ReceiptRow } from "./ReceiptRow.ts"

const Totals = Schema.Struct({
  receipts: DbInt,
  volume_micro: DbSum,
  filer_micro: DbSum,
  desk_micro: DbSum,
  on_chain_micro: DbSum,
  ledger_only_micro: DbSum,
  filer_paid_on_chain_micro: DbSum,
  on_chain_payouts: DbInt,
  filer_owed_micro: DbSum,
  filer_ledger_micro: DbSum,
  buyers: DbInt,
  /** The filers' and the desk's parts add up to the volume: compared in the database, where the sums are exact. */
  split_exact: Schema.Boolean,
  // The census, read in the same statement: a sale committed between two reads would set its receipt against a
  // purchase count without it.
  handoffs: DbInt,
  filers: DbInt,
  purchases: DbInt
})
export type Totals = typeof Totals.Type

/** What `desk_unlock` answers: the receipt (new or held already) or why there is none. */
const DeskUnlockOutcome = Schema.Union(
  Schema.Struct({ outcome: Schema.Literal("recorded", "unlocked"), receipt: Schema.Object }),
  Schema.Struct({ outcome: Schema.Literal("settling") }),
  Schema.Struct({
    outcome: Schema.Literal("over_cap"),
    agent: Schema.Struct({ spent_micro: DbInt, spend_cap_micro: DbInt })
  })
)

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const run = yield* FiberSet.makeRuntime<never>()
  const select = sql`SELECT ${sql.literal(RECEIPT_COLUMNS)} FROM receipts r JOIN handoffs h ON h.seq = r.handoff_seq`

  const findFor = SqlSchema.findOne({
    Request: Schema.Struct({ payer: Schema.String, handoffSeq: Schema.Number }),
    Result: ReceiptRow,
    execute: ({ handoffSeq, payer }) =>
      sql`/* prepared */ ${select} WHERE r.payer = ${payer} AND r.handoff_seq = ${handoffSeq}`
  })

  const findById = SqlSchema.findOne({
    Request: Schema.String,
    Result: ReceiptRow,
    execute: (receiptId) => sql`${select} WHERE r.receipt_id = ${receiptId}`
  })

  /** The receipt that an on-chain payment from `wallet` bought for this handoff, if one did. */
  const findPaidBy = SqlSchema.findOne({
    Request: Schema.Struct({ wallet: Schema.String, handoffSeq: Schema.Number }),
    Result: ReceiptRow,
    execute: ({ handoffSeq, wallet }) =>
      sql`${select} WHERE r.payment_payer_address = ${wallet} AND r.handoff_seq = ${handoffSeq} ORDER BY r.seq LIMIT 1`
  })

  /** A receipt as the SQL functions that write it take it (`new_receipt`, migration 0013), as JSON. */
  const newReceiptFields = (receipt: NewReceipt) => ({
    receipt_id: receipt.receiptId,
    handoff_seq: receipt.handoffSeq,
    payer: receipt.payer,
    filer_did: receipt.filerDid,
    price_micro: receipt.priceMicro,
    filer_micro: receipt.filerMicro,
    desk_micro: receipt.deskMicro,
    kind: receipt.kind,
    mode: receipt.mode,
    network: receipt.network,
    payment_tx_hash: receipt.payment?.txHash ?? null,
    payment_payer_address: receipt.payment?.payerAddress ?? null,
    payment_nonce: receipt.payment?.nonce ?? null,
    payment_chain_id: receipt.payment?.chainId ?? null,
    payment_log_index: receipt.payment?.logIndex ?? null,
    payout_status: receipt.payoutStatus,
    payout_address: receipt.payoutAddress,
    counts_as_purchase: receipt.countsAsPurchase,
    payout: receipt.payout,
    from_block: receipt.payment?.fromBlock.toString() ?? null
  })
  const asNewReceipt = (receipt: NewReceipt) =>
    sql`jsonb_populate_record(NULL::new_receipt, ${JSON.stringify(newReceiptFields(receipt))}::jsonb)`

  /**
   * The one receipt writer, for both rails, in one statement (`record_receipt`, migration 0013): the receipt
   * (with the filer's payout address as registered now unless given), the purchase counted unless the rules say
   * not, the payout row when the share is to move on-chain, and the receipt read back with its title.
   */
  const record = (receipt: NewReceipt) =>
    SqlSchema.single({
      Request: Schema.Void,
      Result: ReceiptRow,
      execute: () =>
        sql`SELECT r.receipt_id, r.handoff_seq, h.title, r.payer, r.filer_did, r.price_micro, r.filer_micro,
          r.desk_micro, r.kind, r.mode, r.network, r.payment_tx_hash, r.payment_payer_address, r.payout_status,
          r.payout_address, r.payout_tx_hash, r.created_at
        FROM record_receipt(${asNewReceipt(receipt)}) r JOIN handoffs h ON h.seq = r.handoff_seq`
    })(undefined)

  /** One desk-receipt unlock as `desk_unlock_batch` takes it. */
  interface Unlock {
    readonly receipt: NewReceipt
    readonly spendMicro: number
  }
  const unlockStatement = (unlocks: ReadonlyArray<Unlock>) =>
    Effect.map(
      sql<{ outcomes: ReadonlyArray<unknown> }>`/* prepared */ SELECT to_jsonb(desk_unlock_batch(
          array_agg((u.item->>'spend')::bigint ORDER BY u.at),
          array_agg(jsonb_populate_record(NULL::new_receipt, u.item->'receipt') ORDER BY u.at))) AS outcomes
        FROM jsonb_array_elements(${
        JSON.stringify(unlocks.map((_) => ({ spend: _.spendMicro, receipt: newReceiptFields(_.receipt) })))
      }::jsonb) WITH ORDINALITY AS u(item, at)`,
      ([row]) => row!.outcomes
    )
  const unlockAlone = (unlock: Unlock) => Effect.map(unlockStatement([unlock]), (outcomes) => outcomes[0])
  /**
   * Unlocks that arrive while one batch is out are written together by the next (src/Boarding.ts): one statement
   * and one commit for the lot (`desk_unlock_batch`, migration 0028). A batch the database refused wrote nothing;
   * each of its unlocks is then run alone, so one unlock's failure is its own. A batch whose answer was lost (the
   * connection went) may have been committed: run again, each unlock would find its own new receipt and answer
   * that it was held already and nothing was charged, to a buyer charged by this very request. Each of them fails
   * instead, as one unlock alone would; a retry then reads what was written. Each unlock's answer (or failure) comes
   * back by the unlock.
   */
  const unlockBatch = (unlocks: ReadonlyArray<Unlock>) =>
    unlockStatement(unlocks).pipe(
      Effect.map((outcomes) => new Map(unlocks.map((unlock, at) => [unlock, Exit.succeed(outcomes[at])] as const))),
      Effect.catchAll((error) =>
        unlocks.length === 1 || !isRefusedStatement(error)
          ? Effect.succeed(new Map(unlocks.map((unlock) => [unlock, Exit.fail(error)] as const)))
          : Effect.map(
            Effect.forEach(unlocks, (unlock) => Effect.exit(unlockAlone(unlock)), { concurrency: "unbounded" }),
            (exits) => new Map(unlocks.map((unlock, at) => [unlock, exits[at]!] as const))
          )
      )
    )
  const boarded = boarding({ run, send: unlockBatch })
  const unlockOutcome = (unlock: Unlock) =>
    Effect.flatMap(
      Effect.serviceOption(SqlClient.TransactionConnection),
      // Inside a transaction it goes alone on the transaction's connection, as HandoffRepo's reads do.
      (transaction) =>
        Option.isSome(transaction) ? unlockAlone(unlock) : Effect.flatten(
          Effect.map(boarded(unlock), (exits) => exits.get(unlock)!)
        )
    )

  /**
   * A desk-receipt unlock: under the payer's row lock, the receipt it already holds, or a refusal (an x402 payment
   * for it still settling, the cap), or the new receipt with `spendMicro` added to the payer's spend.
   */
  const deskUnlock = (receipt: NewReceipt, spendMicro: number, title: string) =>
    Effect.gen(function*() {
      const outcome = yield* Schema.decodeUnknown(DeskUnlockOutcome)(yield* unlockOutcome({ receipt, spendMicro }))
      switch (outcome.outcome) {
        case "recorded":
        case "unlocked":
          return {
            outcome: outcome.outcome,
            receipt: yield* Schema.decodeUnknown(ReceiptRow)({ ...outcome.receipt, title })
          } as const
        default:
          return outcome
      }
    })

  const recentSales = SqlSchema.findAll({
    Request: Schema.Number,
    Result: ReceiptRow,
    execute: (limit) => sql`${select} WHERE r.kind = 'sale' ORDER BY r.seq DESC LIMIT ${limit}`
  })

  // Kept counters (migration 0011), written by triggers in each change's own transaction: no scan of receipts.
  const totals = SqlSchema.single({
    Request: Schema.Void,
    Result: Totals,
    execute: () =>
      sql`SELECT coalesce(sum(receipts), 0) AS receipts, coalesce(sum(volume_micro), 0) AS volume_micro,
          coalesce(sum(filer_micro), 0) AS filer_micro, coalesce(sum(desk_micro), 0) AS desk_micro,
          coalesce(sum(on_chain_micro), 0) AS on_chain_micro, coalesce(sum(ledger_only_micro), 0) AS ledger_only_micro,
          coalesce(sum(filer_paid_on_chain_micro), 0) AS filer_paid_on_chain_micro,
          coalesce(sum(on_chain_payouts), 0) AS on_chain_payouts,
          coalesce(sum(filer_owed_micro), 0) AS filer_owed_micro,
          coalesce(sum(filer_ledger_micro), 0) AS filer_ledger_micro, coalesce(sum(buyers), 0) AS buyers,
          coalesce(sum(filer_micro), 0) + coalesce(sum(desk_micro), 0) = coalesce(sum(volume_micro), 0) AS split_exact,
          coalesce(sum(handoffs), 0) AS handoffs, coalesce(sum(filers), 0) AS filers,
          coalesce(sum(purchases), 0) AS purchases
        FROM books_tally`
  })

  /** The agent's vote, new or changed; the handoff's counts follow it by a trigger (migration 0018). */
  const vote = (handoffSeq: number, agent: string, useful: boolean) =>
    sql`INSERT INTO feedback (handoff_seq, agent_id, useful) VALUES (${handoffSeq}, ${agent}, ${useful})
      ON CONFLICT (handoff_seq, agent_id) DO UPDATE SET useful = excluded.useful, updated_at = now()`

  return {
    findFor: (payer: string, handoffSeq: number) => Effect.orDie(findFor({ payer, handoffSeq })),
    findPaidBy: (wallet: string, handoffSeq: number) => Effect.orDie(findPaidBy({ wallet, handoffSeq })),
    findById: (receiptId: string) => Effect.orDie(findById(receiptId)),
    /** Fails only with a SqlError (a unique violation is the caller's to read); anything else is a defect. */
    record: (receipt: NewReceipt) =>
      record(receipt).pipe(Effect.catchTags({ ParseError: Effect.die, NoSuchElementException: Effect.die })),
    /** Fails only with a SqlError (a unique violation is the caller's to read); anything else is a defect. */
    deskUnlock: (receipt: NewReceipt, spendMicro: number, title: string) =>
      deskUnlock(receipt, spendMicro, title).pipe(Effect.catchTag("ParseError", Effect.die)),
    list: (filter: ReceiptFilter) => Effect.orDie(listReceipts(sql, filter)),
    recentSales: (limit: number) => Effect.orDie(recentSales(limit)),
    totals: Effect.orDie(totals(undefined)),
    vote: (handoffSeq: number, agent: string, useful: boolean) => Effect.orDie(vote(handoffSeq, agent, useful))
  } as const
})

export class ReceiptRepo extends Context.Tag("ReceiptRepo")<ReceiptRepo, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.scoped(ReceiptRepo, make)
}
