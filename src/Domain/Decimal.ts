/**
 * Decimal literals against the float64 they parse to: JSON.parse and Number read every number as one, so
 * `0.2500000000000000001` becomes 0.25 and `1e-400` 0, and a rule on the parsed value never sees what was sent.
 */

const DECIMAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

/** A decimal's value as `<sign><digits>e<exponent>`, with no leading or trailing zeros ("0" for zero). */
const valueOf = (decimal: string): string | undefined => {
  const parts = DECIMAL.exec(decimal)
  if (parts === null) return undefined // Infinity: no decimal keeps it
  const [, whole = "", fraction = "", exponent = "0"] = parts
  const digits = `${whole}${fraction}`.replace(/^0+/, "")
  if (digits === "") return "0"
  const significant = digits.replace(/0+$/, "")
  const shift = Number(exponent) - fraction.length + (digits.length - significant.length)
  return `${decimal.startsWith("-") ? "-" : ""}${significant}e${shift}`
}

/** Whether a JSON-style decimal literal parses to a float64 of exactly its value. */
export const keptExactly = (literal: string) => valueOf(literal) === valueOf(String(Number(literal)))
