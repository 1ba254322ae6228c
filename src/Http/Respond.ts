import { HttpApiSchema, HttpApp, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { JsonParts, jsonParts } from "./JsonParts.ts"

/**
 * `value` as a JSON response whose body stays a string until Node writes it. The platform's own JSON responses
 * encode their text into a Uint8Array first (TextEncoder): a copy and an ArrayBuffer per response, which the
 * young generation must track and sweep, for a body Node then copies again onto the socket. Node writes a string
 * body with its headers in one go; the length is given so the response keeps a Content-Length. A body with a long
 * list (a page of 100 previews, 176 kB) goes out in parts instead (src/Http/JsonParts.ts), which only the desk's
 * own server writes (src/Http/NodeServer.ts).
 */
export const jsonResponse = (
  value: unknown,
  options?: { readonly status?: number; readonly headers?: Record<string, string> }
): HttpServerResponse.HttpServerResponse => {
  const { body, length } = jsonBody(value)
  return HttpServerResponse.raw(body, {
    status: options?.status,
    headers: options?.headers,
    contentType: "application/json",
    contentLength: length
  })
}

/** `value`'s JSON text, whole or in parts, with its length in bytes. */
const jsonBody = (value: unknown): { readonly body: string | JsonParts; readonly length: number } => {
  const parts = jsonParts(value)
  if (parts === undefined) {
    const text = JSON.stringify(value)
    return { body: text, length: Buffer.byteLength(text) }
  }
  return { body: new JsonParts(parts), length: parts.reduce((bytes, part) => bytes + Buffer.byteLength(part), 0) }
}

/** A JSON error response built from one of the desk's error schemas, with the status the schema declares. */
export const errorResponse = <A, I>(
  schema: Schema.Schema<A, I>,
  error: A,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse =>
  jsonResponse(Schema.encodeSync(schema)(error), { status: HttpApiSchema.getStatusErrorAST(schema.ast), headers })

/**
 * A success body sent without walking its schema: for schemas whose encoding changes nothing (brands, literals,
 * plain records), where the walk only re-checks what the desk just built. `A extends I` keeps transforming
 * schemas (dates, numbers from strings) out at compile time; a test pins the identity at run time.
 */
export const encodedAsIs = <A extends I, I>(
  _schema: Schema.Schema<A, I>,
  value: A,
  headers?: Record<string, string>
): HttpServerResponse.HttpServerResponse => jsonResponse(value, headers === undefined ? undefined : { headers })

/**
 * The headers of an answer that depends on who asks (`X-AGENT-ID`, `SIGN-IN-WITH-X`), not on its URL alone: a
 * sealed body, a buyer's receipt, a fresh identity. No cache may keep it, or a shared one (a reverse proxy) would
 * hand it to the next client asking for the same URL.
 */
export const PRIVATE_ANSWER: Record<string, string> = {
  "cache-control": "private, no-store",
  vary: "X-AGENT-ID, SIGN-IN-WITH-X"
}

/** PRIVATE_ANSWER on whatever response the request ends with, a failure's included. */
export const answeredPrivately = HttpApp.appendPreResponseHandler((_, response) =>
  Effect.succeed(HttpServerResponse.setHeaders(response, PRIVATE_ANSWER))
)
