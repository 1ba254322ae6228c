import { Schema } from "effect"
import { rule } from "./Issues.ts"

export const MICROS_PER_USD = 1_000_000
/**
 * Largest amount of one price, cap or estimate: 1e9 USD keeps each amount and its splits safe integers. Sums of
 * them are kept in numeric columns, exact however large (migration 0026), and read as the nearest JSON number.
 */
export const MAX_USD = 1_000_000_000

export const MicroUsd = Schema.Int.pipe(Schema.nonNegative(), Schema.brand("MicroUsd"))
export type MicroUsd = typeof MicroUsd.Type

export const toUsd = (micros: number): number => micros / MICROS_PER_USD

/** Whole micro-USDC as a plain decimal in USD, as a URL takes it back: 3000000 is "3", 1 is "0.000001" (not 1e-6). */
export const usdText = (micros: number): string => {
  const fraction = String(micros % MICROS_PER_USD).padStart(6, "0").replace(/0+$/, "")
  return `${Math.floor(micros / MICROS_PER_USD)}${fraction === "" ? "" : `.${fraction}`}`
}

const hasAtMostSixDecimals = (usd: number) => Math.round(usd * MICROS_PER_USD) / MICROS_PER_USD === usd

/** A JSON number of US dollars from `minimum` to MAX_USD with at most 6 decimals, decoded to micro-USDC. */
export const usdAmount = (minimum: number) =>
  Schema.transform(
    Schema.Number.annotations({ message: rule("must be a number of US dollars") }).pipe(
      Schema.filter(Number.isFinite, { message: rule("must be a finite number of US dollars") }),
      Schema.filter((usd) => usd >= minimum && usd <= MAX_USD, {
        message: rule(`must be between ${minimum} and ${MAX_USD} US dollars`),
        jsonSchema: { minimum, maximum: MAX_USD }
      }),
      // Not a JSON Schema multipleOf: validators divide in binary floating point and would refuse 1.2 or 0.3.
      Schema.filter(hasAtMostSixDecimals, {
        message: rule("must have at most 6 decimals (amounts are whole micro-USDC)")
      })
    ),
    MicroUsd,
    {
      strict: true,
      decode: (usd) => MicroUsd.make(Math.round(usd * MICROS_PER_USD)),
      encode: toUsd
    }
  )

/** Any amount of US dollars the desk stores, zero included. */
export const UsdAmount = usdAmount(0).annotations({ description: "US dollars (USDC), at most 6 decimals" })

/** The desk's 10 % fee split: the filer's share is floored to whole micro-USDC, the desk keeps the rest. */
export const FEE_BPS = 1000
export const splitPrice = (price: number) => {
  // In two parts, so no product leaves the safe integers (price × 9000 would, above 1e12 micro-USDC).
  const share = 10_000 - FEE_BPS
  const filer = Math.floor(price / 10_000) * share + Math.floor(((price % 10_000) * share) / 10_000)
  return { filer, desk: price - filer }
}
