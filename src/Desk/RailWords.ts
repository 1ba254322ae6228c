import type { Rail } from "../Settlement.ts"

/** What money the desk moves, in the words every document, the sandbox and the status use. */
export const moneyWords = (rail: Rail): string =>
  rail.x402Ready ? `${rail.asset} on ${rail.network} (stage ${rail.stage})` : "ledger receipts, no USDC"

/** How an unlock is paid, for the pages that show a price. */
export const unlockWords = (rail: Rail): string =>
  rail.x402Ready ? `paid in ${moneyWords(rail)}` : "written as a ledger receipt: no USDC moves on this desk"

/** How an X-PAYMENT header is taken, for documents that name the header. */
export const paymentHeaderWords = (rail: Rail): string =>
  rail.x402Ready
    ? `x402, exact scheme: ${rail.asset} on ${rail.network}, stage ${rail.stage}`
    : "not accepted on this desk: ledger receipts, no USDC"

/** The status `note` of a desk without a chain: the adapter's words, with the one fact a buyer must know first. */
export const statusNote = (rail: Rail): string => rail.x402Ready ? rail.note : `Ledger receipts, no USDC: ${rail.note}`

export const payoutWords = (rail: Rail): string =>
  !rail.x402Ready
    ? "No chain is configured: sales are ledger receipts; no USDC moves, and filers' shares are recorded with " +
      "filerPayoutStatus ledger, never paid on-chain."
    : rail.payoutEnabled
    ? "After an X-PAYMENT unlock the filer's 90 % is sent in USDC to its registered payoutAddress. A desk-receipt " +
      "unlock moves no USDC: its share is recorded with filerPayoutStatus ledger and never paid on-chain."
    : "No desk wallet is configured: filers' shares of X-PAYMENT unlocks are recorded as owed and sent once one is."
