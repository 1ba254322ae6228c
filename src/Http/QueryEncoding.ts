import type { Issue } from "../Domain/Errors.ts"
import { badEscapes, decodeEscapes } from "./PercentEscapes.ts"

/**
 * The issue of a query parameter the route reads (`reads`) whose %-escapes spell bytes that are not UTF-8
 * (`q=%FF%FE`), as a body that is not UTF-8 is refused: such a value was searched as its literal escapes (and
 * `%C3%28` found a handoff by "28") and echoed back as if meant. A `%` that starts no escape (`q=100%`) stays the
 * character it is, as a browser's form decoding leaves it. A parameter the route does not read is ignored, as any
 * unknown parameter is. Undefined for a query with none.
 */
export const badlyEncodedQuery = (url: string, reads: (name: string) => boolean): Issue | undefined => {
  const start = url.indexOf("?")
  if (start < 0 || !url.includes("%", start)) return undefined
  for (const part of url.slice(start + 1).split("&")) {
    const bad = badEscapes(part)
    if (bad === undefined) continue
    const name = decodeEscapes(part.split("=")[0]!.replace(/\+/g, " "))
    if (!reads(name)) continue
    return { path: name, message: `its %-escapes ${bad} are not UTF-8; send text as UTF-8, percent-encoded` }
  }
  return undefined
}
