import { Context, Effect, Layer, Option } from "effect"
import type { SealedRow } from "../Catalog/HandoffRepo.ts"
import { randomHex } from "../Domain/RandomHex.ts"
import { AgentRepo } from "../Identity/AgentRepo.ts"
import { PayoutChannel } from "../Payouts/Rail.ts"
import { RailProfile, type TransferRef } from "../Settlement.ts"
import { spanned } from "../Spans.ts"
import { ReceiptRepo } from "./ReceiptRepo.ts"
import type { NewReceipt } from "./ReceiptRow.ts"
import { countsAsPurchase, kindOf, termsOf } from "./Rules.ts"

export interface Sale {
  readonly handoff: SealedRow
  readonly payer: string
  /** The on-chain payment of an x402 unlock; none for a desk receipt. */
  readonly payment: Option.Option<{
    readonly transfer: TransferRef
    readonly payerAddress: string
    readonly nonce: string
    readonly fromBlock: bigint
  }>
}

export const newReceiptId = () => `rcpt_${randomHex(12)}`

const make = Effect.gen(function*() {
  const fn = yield* spanned
  const receipts = yield* ReceiptRepo
  const agents = yield* AgentRepo
  const rail = yield* RailProfile
  const payoutsEnabled = Option.isSome(yield* PayoutChannel)

  /** The receipt a sale makes, for either rail, with the terms of Rules. */
  const receiptOf = fn("Sales.receiptOf")(function*(sale: Sale) {
    const { handoff, payer } = sale
    const kind = kindOf(handoff, payer)
    const mode = Option.isSome(sale.payment) ? "x402" : "desk"
    // Only an x402 sale's status depends on the address; a desk receipt takes it as registered, in its statement.
    const payoutAddress = mode === "x402" && kind === "sale"
      ? Option.getOrNull(Option.flatMapNullable(yield* agents.find(handoff.filer_did), (_) => _.payout_address))
      : null
    const terms = termsOf({ kind, mode, priceMicro: handoff.price_micro, payoutAddress, payoutsEnabled })
    return {
      receiptId: newReceiptId(),
      handoffSeq: handoff.seq,
      payer,
      filerDid: handoff.filer_did,
      priceMicro: handoff.price_micro,
      filerMicro: terms.filerMicro,
      deskMicro: terms.deskMicro,
      kind,
      mode,
      network: rail.network,
      payoutStatus: terms.payoutStatus,
      countsAsPurchase: countsAsPurchase(kind),
      payment: Option.getOrNull(
        Option.map(
          sale.payment,
          (_) => ({ ..._.transfer, payerAddress: _.payerAddress, nonce: _.nonce, fromBlock: _.fromBlock })
        )
      ),
      payoutAddress,
      payout: terms.payout
    } satisfies NewReceipt
  })

  /**
   * The receipt, its purchase count and its payout row, for either rail. Runs inside the caller's transaction; a
   * unique violation (one receipt per identity and handoff, one per on-chain transfer) is the caller's SqlError
   * to read.
   */
  const record = (sale: Sale) => Effect.flatMap(receiptOf(sale), receipts.record)

  return { receiptOf, record } as const
})

export class Sales extends Context.Tag("Sales")<Sales, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Sales, make)
}
