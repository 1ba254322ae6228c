import { createHash } from "node:crypto"

/** The characters String.prototype.trim removes; the migration's btrim removes the same set. */
export const TRIMMED_CHARACTERS =
  "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009" +
  "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

/** A body as copied: line endings unified, surrounding whitespace trimmed. */
export const normalizeBody = (body: string): string => body.replace(/\r\n?/g, "\n").trim()

/** SHA-256 (hex) of the normalized body: two handoffs with one key sell one body. */
export const bodyKey = (body: string): string => createHash("sha256").update(normalizeBody(body), "utf8").digest("hex")
