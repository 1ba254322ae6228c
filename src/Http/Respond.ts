import { HttpApiSchema, HttpServerResponse } from "@effect/platform"
import { Schema } from "effect"

/** A JSON error response built from one of the desk's error schemas, with the status the schema declares. */
export const errorResponse = <A, I>(
  schema: Schema.Schema<A, I>,
  error: A,
  headers: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(Schema.encodeSync(schema)(error), {
    status: HttpApiSchema.getStatusErrorAST(schema.ast),
    headers
  })

/**
 * A success body sent without walking its schema: for schemas whose encoding changes nothing (brands, literals,
 * plain records), where the walk only re-checks what the desk just built. `A extends I` keeps transforming
 * schemas (dates, numbers from strings) out at compile time; a test pins the identity at run time.
 */
export const encodedAsIs = <A extends I, I>(
  _schema: Schema.Schema<A, I>,
  value: A
): HttpServerResponse.HttpServerResponse => HttpServerResponse.unsafeJson(value)
