import { SpendCapExceeded } from "../Domain/Errors.ts"
import { splitPrice, toUsd } from "../Domain/Money.ts"
import type { PayoutStatus, ReceiptKind } from "../Domain/Receipt.ts"

/**
 * The money rules of a sale, in one place and free of effects: both rails (desk receipt and x402) write their
 * receipts through ReceiptRepo.record with the terms computed here.
 */

export type Mode = "desk" | "x402"

/** The statuses whose share a payout row will still move: what `filerOwedUsd` adds up. */
export const OWED: ReadonlyArray<PayoutStatus> = ["owed", "pending", "failed"]

/** The demo packet is never a sale; neither is a filer buying its own handoff. */
export const kindOf = (
  handoff: { readonly is_demo: boolean; readonly filer_did: string },
  payer: string
): ReceiptKind => handoff.is_demo ? "demo" : payer === handoff.filer_did ? "self" : "sale"

/**
 * What an unlock adds to the buyer's spend (checked against its cap): a sale's price, and the price a filer pays
 * on-chain for its own handoff (USDC leaves its wallet: the cap its owner set holds it too). A desk receipt for
 * its own handoff or the demo packet moves nothing and spends nothing.
 */
export const spendOf = (kind: ReceiptKind, mode: Mode, priceMicro: number) =>
  kind === "sale" || (kind === "self" && mode === "x402") ? priceMicro : 0

/** A handoff's `purchases` counts every unlock but the filer's own. */
export const countsAsPurchase = (kind: ReceiptKind) => kind !== "self"

/** Only buyers vote: feedback from a filer's own unlock or the demo packet does not count. */
export const mayVote = (kind: ReceiptKind) => kind === "sale"

export interface Terms {
  readonly filerMicro: number
  readonly deskMicro: number
  readonly payoutStatus: PayoutStatus
  /** The payout row to write with the receipt, when its share is to move on-chain. */
  readonly payout: "owed" | "pending" | null
}

/**
 * The filer's 90 % (floored to whole micro-USDC) of a sale; the desk keeps the whole price of anything else.
 * Only an x402 sale moves the share on-chain: at once when the filer has a payout address and the desk a wallet,
 * else it waits as `owed`.
 */
export const termsOf = (sale: {
  readonly kind: ReceiptKind
  readonly mode: Mode
  readonly priceMicro: number
  readonly payoutAddress: string | null
  readonly payoutsEnabled: boolean
}): Terms => {
  const filerMicro = sale.kind === "sale" ? splitPrice(sale.priceMicro).filer : 0
  const deskMicro = sale.priceMicro - filerMicro
  if (filerMicro === 0) return { filerMicro, deskMicro, payoutStatus: "zero", payout: null }
  if (sale.mode === "desk") return { filerMicro, deskMicro, payoutStatus: "ledger", payout: null }
  const payout = sale.payoutAddress !== null && sale.payoutsEnabled ? "pending" : "owed"
  return { filerMicro, deskMicro, payoutStatus: payout, payout }
}

export const capExceeded = (
  agent: { readonly spent_micro: number; readonly spend_cap_micro: number },
  priceMicro: number,
  payer: string
) =>
  new SpendCapExceeded({
    message: `This unlock would take your spend to ${toUsd(agent.spent_micro + priceMicro)} USD, over ` +
      `your spendCapUsd of ${toUsd(agent.spend_cap_micro)}. Ask your owner, then raise it with POST /api/agents, ` +
      `header X-AGENT-ID: ${payer}, body {"id": "${payer}", "spendCapUsd": <new cap>}.`,
    spendCapUsd: toUsd(agent.spend_cap_micro),
    spentUsd: toUsd(agent.spent_micro),
    priceUsd: toUsd(priceMicro)
  })
