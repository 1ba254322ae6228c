import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { InvalidJson, PayloadTooLarge, UnsupportedMediaType } from "../Domain/Errors.ts"
import { errorResponse } from "./Respond.ts"

export const MAX_BODY_BYTES = 1024 * 1024

const tooLarge = errorResponse(
  PayloadTooLarge,
  new PayloadTooLarge({ message: "The request body is over 1 MiB; shorten the body or the lists." })
)

/**
 * Reads and parses JSON bodies before the API sees them: the framework treats an unreadable body as a
 * defect (500), while a client deserves 400/413/415. The text is cached on the request, so it is read once.
 */
export const bodyGuard = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return yield* app
    const declared = Number(request.headers["content-length"] ?? "0")
    if (declared > MAX_BODY_BYTES) return tooLarge
    const contentType = (request.headers["content-type"] ?? "application/json").toLowerCase()
    const text = yield* request.text.pipe(HttpServerRequest.withMaxBodySize(Option.some(MAX_BODY_BYTES)), Effect.either)
    if (text._tag === "Left") return tooLarge
    if (text.right.trim() === "") return yield* app
    if (!contentType.includes("application/json")) {
      return errorResponse(
        UnsupportedMediaType,
        new UnsupportedMediaType({ message: "Send the body as JSON with Content-Type: application/json." })
      )
    }
    try {
      JSON.parse(text.right)
    } catch {
      return errorResponse(InvalidJson, new InvalidJson({ message: "The request body is not valid JSON." }))
    }
    return yield* app
  }))
