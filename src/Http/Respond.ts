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
