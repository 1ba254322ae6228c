import { keptExactly } from "../Domain/Decimal.ts"

/**
 * JSON numbers that a parse would change. JSON.parse reads every number as a float64, so `0.2500000000000000001`
 * arrives as 0.25 and `1e-400` as 0: a rule on the parsed value ("at most 6 decimals") never sees what was sent.
 * A literal is kept exactly when its decimal value equals the shortest decimal of the float64 it parses to; one
 * with at most 15 significant digits and a small exponent always is, so most bodies are not scanned at all.
 */

/** A literal that may not be kept exactly: 16 or more digits in a row (a point between them allowed), or a 3-digit exponent. */
const MAY_BE_LOSSY = /\d[\d.]{15}|[eE][+-]?\d{3}/

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
export interface LossyNumber {
  /** Where it is, as issues name a field: `priceUsd`, `provenance.inputTokens`, `tags.2`; "" for the whole body. */
  readonly path: string
  readonly literal: string
}

/** The first number of a JSON text (one JSON.parse read) that its parse changes, if any. */
/** Every number of `text` its parse would change, in order, with where its literal starts. */
export const lossyNumbers = (text: string): ReadonlyArray<LossyNumber & { readonly start: number }> => {
  const found: Array<LossyNumber & { readonly start: number }> = []
  if (!MAY_BE_LOSSY.test(text)) return found
  // Where the scan is: each open container with its key (an object's last key, an array's next index).
  const open: Array<{ readonly array: boolean; key: string | number }> = []
  const pathHere = () => open.map((_) => _.key).join(".")
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    if (c === "\"") {
      let end = i + 1
      while (text[end] !== "\"") end += text[end] === "\\" ? 2 : 1
      const top = open[open.length - 1]
      // A string before a colon is a key.
      let next = end + 1
      while (text[next] === " " || text[next] === "\n" || text[next] === "\r" || text[next] === "\t") next++
      if (top !== undefined && !top.array && text[next] === ":") top.key = JSON.parse(text.slice(i, end + 1))
      i = end + 1
    } else if (c === "{" || c === "[") {
      open.push({ array: c === "[", key: c === "[" ? 0 : "" })
      i++
    } else if (c === "}" || c === "]") {
      open.pop()
      i++
    } else if (c === ",") {
      const top = open[open.length - 1]
      if (top?.array) top.key = (top.key as number) + 1
      i++
    } else if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER.lastIndex = i
      const literal = NUMBER.exec(text)![0]
      if (!keptExactly(literal)) found.push({ path: pathHere(), literal, start: i })
      i += literal.length
    } else {
      i++
    }
  }
  return found
}

/** What is said of a number no JSON number holds exactly, as sent (its first 40 characters). */
export const lossyProblem = (literal: string): string =>
  `is ${literal.length <= 40 ? literal : `${literal.slice(0, 40)}…`}, which no JSON number holds exactly (it reads as ${
    Number(literal)
  }): send it with at most 15 significant digits`

/**
 * The text with each of `lossy` in its place as `{"lossyNumber": "<literal>"}`: a value no field of the desk
 * takes, so the route's decoding fails there beside every other mistake of the body, and its 422 names them all at
 * once; `lossyMarked` finds it there to say why (src/Http/Failures.ts).
 */
export const markLossy = (text: string, lossy: ReadonlyArray<{ readonly start: number; readonly literal: string }>) => {
  let marked = text
  for (const { literal, start } of [...lossy].reverse()) {
    marked = `${marked.slice(0, start)}{"lossyNumber":${JSON.stringify(literal)}}${
      marked.slice(start + literal.length)
    }`
  }
  return marked
}

/** The literal `markLossy` put at `path` of a parsed body, if it put one there. */
export const lossyMarked = (body: unknown, path: string): string | undefined => {
  let value = body
  for (const key of path === "" ? [] : path.split(".")) {
    if (typeof value !== "object" || value === null) return undefined
    value = (value as Record<string, unknown>)[key]
  }
  if (typeof value !== "object" || value === null) return undefined
  const keys = Object.keys(value)
  const literal = (value as Record<string, unknown>).lossyNumber
  return keys.length === 1 && typeof literal === "string" ? literal : undefined
}
