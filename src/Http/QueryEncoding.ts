import type { HttpServerResponse } from "@effect/platform"
import { InvalidQuery } from "../Domain/Errors.ts"
import { badEscapes, decodeEscapes } from "./PercentEscapes.ts"
import { errorResponse } from "./Respond.ts"

/**
 * The refusal of a query parameter whose %-escapes spell bytes that are not UTF-8 (`q=%FF%FE`), as a body that is
 * not UTF-8 is refused: such a value was searched as its literal escapes (and `%C3%28` found a handoff by "28")
 * and echoed back as if meant. A `%` that starts no escape (`q=100%`) stays the character it is, as a browser's
 * form decoding leaves it. Undefined for a query with none.
 */
export const badlyEncodedQuery = (url: string): HttpServerResponse.HttpServerResponse | undefined => {
  const start = url.indexOf("?")
  if (start < 0 || !url.includes("%", start)) return undefined
  for (const part of url.slice(start + 1).split("&")) {
    const bad = badEscapes(part)
    if (bad === undefined) continue
    const name = decodeEscapes(part.split("=")[0]!.replace(/\+/g, " "))
    const message = `its %-escapes ${bad} are not UTF-8; send text as UTF-8, percent-encoded`
    return errorResponse(
      InvalidQuery,
      new InvalidQuery({ message: `Invalid query parameter: ${name}: ${message}.`, issues: [{ path: name, message }] })
    )
  }
  return undefined
}
