import type { NewReceipt } from "../../src/Ledger/ReceiptRow.ts"
import { newAgentId } from "./Fixtures.ts"

/** A desk-receipt sale of `seq` (priced 0.50 USD by the filing fixture) to `payer`, as the rules make one. */
export const deskSaleOf = (seq: number, payer: string, filer: string): NewReceipt => ({
  receiptId: `rcpt_${newAgentId().slice(-24)}`,
  handoffSeq: seq,
  payer,
  filerDid: filer,
  priceMicro: 500_000,
  filerMicro: 450_000,
  deskMicro: 50_000,
  kind: "sale",
  mode: "desk",
  network: "base",
  payoutStatus: "ledger",
  countsAsPurchase: true,
  payment: null,
  payoutAddress: null,
  payout: null
})
