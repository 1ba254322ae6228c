import type { ReceiptInput } from "@x402/extensions/offer-receipt"
import { convertNetworkStringToCAIP2 } from "@x402/extensions/offer-receipt"
import { Effect, Option } from "effect"
import { handoffIdOf } from "../Domain/Ids.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { ReceiptRow } from "./ReceiptRow.ts"

/** The CAIP-2 name of an x402 network; a name x402's table does not know is signed as it is. */
export const caipNetworkOf = (network: string) => {
  try {
    return convertNetworkStringToCAIP2(network)
  } catch {
    return network
  }
}

/** A desk receipt moved no money on any chain: its signed receipt says so instead of naming one. */
export const DESK_RECEIPT_NETWORK = "desk-receipt"

/**
 * What the desk signs for a sale (x402 offer-receipt): the unlock URL, who paid and where. An x402 sale names
 * the paying wallet, its chain and transaction; a desk receipt names the buyer's id and the receipt id, and is
 * shown only to that buyer.
 */
export const receiptInputOf = (row: ReceiptRow, publicUrl: string): ReceiptInput => {
  const resourceUrl = `${publicUrl}/api/handoffs/${handoffIdOf(row.handoff_seq)}/unlock`
  return row.mode === "x402"
    ? {
      resourceUrl,
      payer: row.payment_payer_address ?? row.payer,
      network: caipNetworkOf(row.network),
      transaction: row.payment_tx_hash ?? row.receipt_id
    }
    : { resourceUrl, payer: row.payer, network: DESK_RECEIPT_NETWORK, transaction: row.receipt_id }
}

/** The signed receipt of a sale, or null when the desk signs nothing. */
export const signedReceiptOf = (signing: ReceiptSigning["Type"], row: ReceiptRow, publicUrl: string) =>
  Effect.map(signing.receipt(receiptInputOf(row, publicUrl)), Option.getOrNull)
