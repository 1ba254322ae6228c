import { Schema } from "effect"

export const MICROS_PER_USD = 1_000_000
/** Largest amount the desk stores: 1e9 USD keeps every sum of micro-USDC a safe integer. */
export const MAX_USD = 1_000_000_000

export const MicroUsd = Schema.Int.pipe(Schema.nonNegative(), Schema.brand("MicroUsd"))
export type MicroUsd = typeof MicroUsd.Type

export const toUsd = (micros: number): number => micros / MICROS_PER_USD

const hasAtMostSixDecimals = (usd: number) => Math.round(usd * MICROS_PER_USD) / MICROS_PER_USD === usd

/** A JSON number of US dollars that must be an exact number of micro-USDC; decodes to micro-USDC. */
export const UsdAmount = Schema.transform(
  Schema.Number.pipe(
    Schema.finite({ message: () => "must be a finite number of US dollars" }),
    Schema.between(0, MAX_USD, { message: () => `must be between 0 and ${MAX_USD} US dollars` }),
    Schema.filter(hasAtMostSixDecimals, {
      message: () => "must have at most 6 decimals (amounts are whole micro-USDC)"
    })
  ),
  MicroUsd,
  {
    strict: true,
    decode: (usd) => MicroUsd.make(Math.round(usd * MICROS_PER_USD)),
    encode: toUsd
  }
).annotations({ description: "US dollars (USDC), at most 6 decimals" })

/** The desk's 10 % fee split: the filer's share is floored to whole micro-USDC, the desk keeps the rest. */
export const FEE_BPS = 1000
export const splitPrice = (price: number) => {
  const filer = Math.floor((price * (10_000 - FEE_BPS)) / 10_000)
  return { filer, desk: price - filer }
}
