import { Schema } from "effect"

export const codePoints = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

const INVISIBLE = /[\p{Cf}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/gu
const WHITESPACE_RUN = /[\s\p{Zs}]+/gu

/** Length of what a reader sees: invisible characters dropped, whitespace runs folded to one space. */
export const visibleLength = (text: string): number =>
  codePoints(text.replace(INVISIBLE, "").replace(WHITESPACE_RUN, " ").trim())

// PostgreSQL text cannot hold NUL (the insert fails), and a lone surrogate is silently stored as U+FFFD.
const UNSTORABLE = /[\u0000\p{Cs}]/u

/** Text PostgreSQL stores exactly as sent: no NUL character, no unpaired UTF-16 surrogate. */
export const isStorable = (text: string): boolean => !UNSTORABLE.test(text)

export const StorableString = Schema.String.pipe(
  Schema.filter(isStorable, { message: () => "must not contain NUL (\\u0000) or unpaired surrogate characters" })
)

/** A string of 1..max Unicode code points that is not only whitespace. */
export const Text = (max: number, description?: string) =>
  StorableString.pipe(
    Schema.filter((s) => visibleLength(s) > 0, { message: () => "must not be empty or only whitespace" }),
    Schema.filter((s) => codePoints(s) <= max, { message: () => `must be at most ${max} characters` }),
    Schema.annotations({ jsonSchema: { type: "string", minLength: 1, maxLength: max }, ...(description ? { description } : {}) })
  )

export const TextList = (maxItems: number, maxChars: number, description?: string) =>
  Schema.Array(Text(maxChars)).pipe(
    Schema.maxItems(maxItems, { message: () => `must have at most ${maxItems} items` }),
    Schema.annotations(description ? { description } : {})
  )
