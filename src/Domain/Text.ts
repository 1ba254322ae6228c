import { Schema } from "effect"
import { rule, STABLE_FILTER } from "./Issues.ts"

export const codePoints = (text: string): number => {
  let count = 0
  for (const _ of text) count++
  return count
}

/**
 * What renders as nothing: format characters, controls but whitespace, every default-ignorable code point (the
 * Hangul fillers U+115F, U+1160, U+3164 and U+FFA0 are letters by category, yet blank; the combining grapheme
 * joiner; variation selectors) and the blank Braille pattern U+2800.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\u2800]/gu
const WHITESPACE_RUN = /[\s\p{Zs}]+/gu
/** Non-spacing and enclosing marks: drawn on the character before them, never beside it (spacing marks count). */
const MARKS = /[\p{Mn}\p{Me}]/gu

/**
 * Length of what a reader sees: invisible characters and combining marks dropped (a letter with its accents is one
 * character, however many are stacked on it), whitespace runs folded to one space. 74 letters and 330 Hangul
 * fillers, or one letter and 330 combining accents, are not 400 visible characters.
 */
export const visibleLength = (text: string): number =>
  codePoints(text.replace(INVISIBLE, "").replace(MARKS, "").replace(WHITESPACE_RUN, " ").trim())

/**
 * Text as a copy of it is compared: Unicode NFKC (full-width and compatibility forms as their plain letters),
 * invisible characters dropped, lowercase, every whitespace run (line breaks, blank lines, tabs, indentation) one
 * space, trimmed. Two texts a reader could not tell apart but by case or layout compare equal.
 */
export const comparableText = (text: string): string =>
  text.normalize("NFKC").replace(INVISIBLE, "").toLowerCase().replace(WHITESPACE_RUN, " ").trim()

// Default-ignorable code points render as nothing (zero-width spaces and joiners, bidi controls, variation
// selectors, fillers); control characters have no place in a label either.
const IGNORABLE = /[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}]/gu

/**
 * A short label (a tag) as it is stored and matched: whitespace runs folded to one space, invisible characters
 * removed, lowercase, Unicode NFC; so two tags that look the same are the same tag. May come out empty.
 */
export const cleanLabel = (text: string): string =>
  text.replace(WHITESPACE_RUN, " ").replace(IGNORABLE, "").trim().toLowerCase().normalize("NFC")

// PostgreSQL text cannot hold NUL (the insert fails), and a lone surrogate is silently stored as U+FFFD.
const UNSTORABLE = /[\u0000\p{Cs}]/u

/** Text PostgreSQL stores exactly as sent: no NUL character, no unpaired UTF-16 surrogate. */
export const isStorable = (text: string): boolean => !UNSTORABLE.test(text)

export const StorableString = Schema.String.annotations({ message: rule("must be a string") }).pipe(
  Schema.filter(isStorable, { message: rule("must not contain NUL (\\u0000) or unpaired surrogate characters") })
)

/**
 * Control characters but tab and line breaks (C0, DEL, C1): nothing a reader sees or a label needs, and each one
 * travels as six characters of JSON (`\u0001`) wherever the text is carried in a header (x402's PAYMENT-REQUIRED
 * repeats title and teaser), where a title of them passed what a client takes.
 */
const CONTROLS = /[\u0001-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u

/** A string of 1..max Unicode code points that is not only whitespace, with no control character but whitespace. */
export const Text = (max: number, description?: string) =>
  StorableString.pipe(
    Schema.filter((s) => !CONTROLS.test(s), {
      message: rule("must not contain control characters (U+0001-U+001F but tab and line breaks, U+007F-U+009F)")
    }),
    Schema.filter((s) => visibleLength(s) > 0, {
      message: rule("must not be empty, or only whitespace and invisible characters")
    }),
    Schema.filter((s) => codePoints(s) <= max, { message: rule(`must be at most ${max} characters`) }),
    // A node with its own jsonSchema is rendered from it alone: the description goes inside.
    Schema.annotations({
      // `pattern` says "not only whitespace" as far as a schema can (invisible characters are the desk's own check).
      jsonSchema: {
        type: "string",
        minLength: 1,
        maxLength: max,
        pattern: "\\S",
        ...(description ? { description } : {})
      },
      ...(description ? { description } : {})
    })
  )

export const TextList = (maxItems: number, maxChars: number, description?: string) =>
  Schema.Array(Text(maxChars)).annotations({ message: rule("must be a JSON array of strings") }).pipe(
    Schema.filter((items) => items.length <= maxItems, {
      // Like Schema.maxItems, judged even when an item fails, so one answer names both.
      [STABLE_FILTER]: true,
      message: (issue) =>
        `must have at most ${maxItems} items; got ${Array.isArray(issue.actual) ? issue.actual.length : "more"}`,
      jsonSchema: { maxItems },
      ...(description ? { description } : {})
    })
  )
