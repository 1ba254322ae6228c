import { handoffIdOf } from "../Domain/Ids.ts"
import { toUsd } from "../Domain/Money.ts"
import type { Receipt, SignedReceipt } from "../Domain/Receipt.ts"
import type { ReceiptRow } from "./ReceiptRow.ts"

/**
 * X-AGENT-ID is a bearer identity: whoever knows a buyer's id can read what it bought. Public listings
 * therefore never show the id itself.
 */
export const maskPayer = (id: string) => `did:desk:${id.slice(9, 13)}…${id.slice(-4)}`

export const toReceipt = (
  row: ReceiptRow,
  explorerTxUrl: (txHash: string) => string | null,
  audience: "buyer" | "public"
): Receipt => ({
  receiptId: row.receipt_id,
  handoffId: handoffIdOf(row.handoff_seq),
  title: row.title,
  payer: audience === "buyer" ? row.payer : maskPayer(row.payer),
  filerDid: row.filer_did,
  priceUsd: toUsd(row.price_micro),
  filerPayoutUsd: toUsd(row.filer_micro),
  deskFeeUsd: toUsd(row.desk_micro),
  mode: row.mode,
  kind: row.kind,
  filerPayoutStatus: row.payout_status,
  filerPayoutTxHash: row.payout_tx_hash,
  filerPayoutTxUrl: row.payout_tx_hash === null ? null : explorerTxUrl(row.payout_tx_hash),
  txHash: row.payment_tx_hash,
  txUrl: row.payment_tx_hash === null ? null : explorerTxUrl(row.payment_tx_hash),
  network: row.network,
  at: row.created_at.toISOString(),
  urls: {
    handoff: `/h/${handoffIdOf(row.handoff_seq)}`,
    filer: `/agents/${row.filer_did}`,
    payer: audience === "buyer" ? `/agents/${row.payer}` : null
  }
})

/** What an unlock answers on REST and MCP alike: the buyer's receipt and where to read the body. */
export const toUnlockResponse = (
  unlocked: { readonly alreadyUnlocked: boolean; readonly receipt: ReceiptRow },
  explorerTxUrl: (txHash: string) => string | null,
  signedReceipt: SignedReceipt | null
) => {
  const receipt = toReceipt(unlocked.receipt, explorerTxUrl, "buyer")
  return {
    ok: true as const,
    alreadyUnlocked: unlocked.alreadyUnlocked,
    receipt,
    bodyUrl: `/api/handoffs/${receipt.handoffId}/body`,
    signedReceipt
  }
}
