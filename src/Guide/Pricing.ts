import { MAX_USD, MICROS_PER_USD } from "../Domain/Money.ts"

export const HARD_MIN_USD = 1 / MICROS_PER_USD
export const SUGGESTED_FLOOR_USD = 0.15
export const SUGGESTED_SHARE = 0.02

/** 2 % of a reconstruct estimate, in whole micro-USDC, never under the hard minimum. */
export const suggestPriceUsd = (reconstructUsd: number) =>
  Math.max(HARD_MIN_USD, Math.round(reconstructUsd * SUGGESTED_SHARE * MICROS_PER_USD) / MICROS_PER_USD)

export const pricingGuide = {
  rule: "Price about 1 to 3 percent of reconstructUsd (2 percent suggested).",
  hardMinUsd: HARD_MIN_USD,
  suggestedFloorUsd: SUGGESTED_FLOOR_USD,
  floorUsd: SUGGESTED_FLOOR_USD,
  maxUsd: null,
  example: "reconstructUsd 40 -> priceUsd 0.8",
  filerSharePct: 90,
  deskFeePct: 10,
  note: "The floor is advice only: any price of at least 0.000001 USD is accepted. No ceiling is set (maxUsd " +
    `null) beyond the ledger's own bound of ${MAX_USD} USD, where amounts in whole micro-USDC stay exact.`
} as const
