import { type HttpServerError, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option } from "effect"
import type { IncomingMessage } from "node:http"
import {
  AgentIdRequired,
  InvalidAgentId,
  InvalidHandoff,
  InvalidJson,
  InvalidRequest,
  PayloadTooLarge,
  UnsupportedMediaType
} from "../Domain/Errors.ts"
import { LONG_LIST, shapeProblem } from "../Domain/JsonShape.ts"
import { AGENT_HEADER, requireAgentId } from "../Identity/AgentId.ts"
import { lossyNumbers, lossyProblem, markLossy } from "./LossyNumbers.ts"
import { errorResponse } from "./Respond.ts"

export const MAX_BODY_BYTES = 1024 * 1024

/** What a body over MAX_BODY_BYTES is told, here and by Node's server for one announced with Expect (NodeServer.ts). */
export const OVER_LIMIT = "The request body is over 1 MiB; shorten the body or the lists."
const overLimit = new PayloadTooLarge({ message: OVER_LIMIT })
const tooLarge = errorResponse(PayloadTooLarge, overLimit)
// Answered before the rest of the body is read: the connection cannot carry another request after it.
const tooLargeClosing = errorResponse(PayloadTooLarge, overLimit, { connection: "close" })

const unsupportedMedia = errorResponse(
  UnsupportedMediaType,
  new UnsupportedMediaType({
    message: "Send the body as JSON with Content-Type: application/json, without a Content-Encoding."
  })
)

const invalidJson: JsonRefusal = {
  refuse: (message) => errorResponse(InvalidJson, new InvalidJson({ message })),
  judgesLongLists: false
}

const UNREADABLE = "The request body could not be read to its end."

// The reader's message when the body passes maxBodySize; anything else is a client that went away.
const isOverLimit = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

/**
 * How a route refuses a body that is no JSON (unreadable, not UTF-8, unparsable, too big in shape): 400
 * `invalid_json`, unless it speaks a protocol of its own (JSON-RPC's Parse error at /mcp: src/Http/Server.ts).
 * A protocol may judge a list over JSON_LIMITS.items itself (`judgesLongLists`): MCP refuses a batch as a batch and
 * a tool's long list as the tool's own error, as REST refuses it with its route's 422.
 */
export interface JsonRefusal {
  readonly refuse: (message: string) => HttpServerResponse.HttpServerResponse
  readonly judgesLongLists: boolean
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false })

/**
 * A list too long to decode, as the route's own 422 (it is over the field's documented maximum): a filing's
 * `invalid_handoff`, any other API body's `invalid_request`. MCP's JSON-RPC and a top-level array stay 400.
 */
/** A refusal of one field of the body before its decoding, as the route's own 422 (undefined off the API). */
const fieldRefused = (method: string, path: string, field: string, problem: string) => {
  const issues = [{ path: field, message: problem }]
  const message = `${field === "" ? "The body" : field} ${problem}.`
  if (method === "POST" && path === "/api/handoffs") {
    return errorResponse(InvalidHandoff, new InvalidHandoff({ message, issues }))
  }
  return path.startsWith("/api/") ? errorResponse(InvalidRequest, new InvalidRequest({ message, issues })) : undefined
}

/**
 * A body of undeclared length (chunked), read up to MAX_BODY_BYTES. The platform's reader destroys the request,
 * and with it the socket, once past its limit, so the client got no answer at all; this one stops reading there
 * and leaves the connection to the 413 (`Connection: close`). Left: over the limit (true) or unreadable (false).
 */
const readUndeclared = (message: IncomingMessage) =>
  Effect.async<Uint8Array, boolean>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const done = (result: Either.Either<Uint8Array, boolean>) => {
      message.off("data", onData).off("end", onEnd).off("error", onError).off("aborted", onError)
      resume(result)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk)
      message.pause()
      done(Either.left(true))
    }
    const onEnd = () => done(Either.right(Buffer.concat(chunks, size)))
    const onError = () => done(Either.left(false))
    message.on("data", onData).on("end", onEnd).on("error", onError).on("aborted", onError)
    return Effect.sync(() =>
      message.off("data", onData).off("end", onEnd).off("error", onError).off("aborted", onError)
    )
  })

/** The request with its body already read: the node stream cannot be read twice. */
const withBody = (request: HttpServerRequest.HttpServerRequest, bytes: Uint8Array, text: string) =>
  Object.create(request, {
    text: { value: Effect.succeed(text) },
    arrayBuffer: { value: Effect.succeed(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)) }
  }) as HttpServerRequest.HttpServerRequest

/** The answer to a request that must name its identity and names none (401) or a malformed one (400). */
const identityRefused = (header: string | undefined) =>
  Effect.match(requireAgentId(header), {
    onFailure: (error) =>
      error._tag === "AgentIdRequired"
        ? errorResponse(AgentIdRequired, error)
        : errorResponse(InvalidAgentId, error),
    onSuccess: () => undefined
  })

/**
 * Reads and checks JSON bodies before the API sees them: the framework treats an unreadable body as a
 * defect (500), while a client deserves 400/413/415. Bytes are decoded strictly, because a lenient decode
 * would store U+FFFD in place of what the client sent; the shape is bounded, because formatting the decode
 * error of a deeply nested value overflows the stack. A route that acts as an identity (`identityFirst`) judges
 * X-AGENT-ID before the body, as its API middleware would: a filing without one is a 401 whatever its body, not a
 * 400 `invalid_json` or a 415. Only a declared length over the limit comes first: nothing of the body is read for it.
 */
export const guardBody = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>,
  identityFirst = false,
  { judgesLongLists, refuse: refuseJson }: JsonRefusal = invalidJson
) =>
  Effect.gen(function*() {
    // A copy of Node's headers each time it is read: read once.
    const headers = request.headers
    const length = headers["content-length"]
    if (Number(length ?? "0") > MAX_BODY_BYTES) return tooLarge
    const refused = identityFirst ? yield* identityRefused(headers[AGENT_HEADER]) : undefined
    if (refused !== undefined) return refused
    let bytes: Uint8Array
    if (length === undefined) {
      const read = yield* Effect.either(readUndeclared(NodeHttpServerRequest.toIncomingMessage(request)))
      if (read._tag === "Left") return read.left ? tooLargeClosing : refuseJson(UNREADABLE)
      bytes = read.right
    } else {
      // Node holds a declared body to its length, which is within the limit here.
      const read = yield* request.arrayBuffer.pipe(
        HttpServerRequest.withMaxBodySize(Option.some(MAX_BODY_BYTES)),
        Effect.either
      )
      if (read._tag === "Left") return isOverLimit(read.left) ? tooLarge : refuseJson(UNREADABLE)
      bytes = new Uint8Array(read.right)
    }
    // A body in a content coding (gzip) is no JSON text to read: 415, as RFC 9110 answers a coding it does not take.
    const coding = (headers["content-encoding"] ?? "identity").trim().toLowerCase()
    if (coding !== "identity" && coding !== "") return unsupportedMedia
    let text: string
    try {
      text = utf8.decode(bytes)
    } catch {
      return refuseJson("The request body is not valid UTF-8; send JSON encoded as UTF-8.")
    }
    // Checked for an empty body too: the platform would wait on the stream read above for a multipart one.
    const mediaType = (headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase()
    if (mediaType !== "application/json") return unsupportedMedia
    const next = app.pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, withBody(request, bytes, text)))
    // No body: the API's 422 names what is missing. Whitespace alone is not JSON (the platform's own parse of it
    // failed as a defect, a 500): it is parsed below.
    if (text === "") return yield* next
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return refuseJson("The request body is not valid JSON.")
    }
    const path = request.url.split("?")[0]!
    const shape = shapeProblem(parsed)
    if (shape !== undefined) {
      if (shape.path !== undefined && judgesLongLists) return yield* next
      const routed = shape.path === undefined || shape.path === ""
        ? undefined
        : fieldRefused(request.method, path, shape.path, LONG_LIST)
      return routed ?? refuseJson(`The request body ${shape.problem}.`)
    }
    // A number the parse changed (0.2500000000000000001 read as 0.25) would pass rules it breaks: refused as sent.
    const lossy = lossyNumbers(text)
    if (lossy.length === 0) return yield* next
    // In an API body's fields, marked where each is: the route's decoding fails there beside every other mistake,
    // and its 422 names them all in one answer (src/Http/Failures.ts words each as below).
    if (path.startsWith("/api/") && lossy.every((_) => _.path !== "")) {
      const marked = markLossy(text, lossy)
      return yield* app.pipe(
        Effect.provideService(HttpServerRequest.HttpServerRequest, withBody(request, Buffer.from(marked), marked))
      )
    }
    const problem = lossyProblem(lossy[0]!.literal)
    return fieldRefused(request.method, path, lossy[0]!.path, problem) ??
      refuseJson(`The request body's number ${problem}.`)
  })
