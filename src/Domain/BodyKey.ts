import { createHash } from "node:crypto"
import { comparableText } from "./Text.ts"

/** The characters String.prototype.trim removes; migration 0008's btrim removes the same set. */
export const TRIMMED_CHARACTERS =
  "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" +
  "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

/**
 * SHA-256 (hex) of the body as a copy of it is compared (src/Domain/Text.ts `comparableText`: case, whitespace,
 * line breaks, blank lines and invisible characters aside): two handoffs with one key sell one body. Keys stored
 * under an earlier rule are computed again by the migration that changed it (0030).
 */
export const bodyKey = (body: string): string => createHash("sha256").update(comparableText(body), "utf8").digest("hex")
