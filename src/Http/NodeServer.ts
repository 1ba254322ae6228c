import { NodeHttpServer } from "@effect/platform-node"
import { Config, Duration, Effect, Layer, Predicate, Runtime, Schema } from "effect"
import { createServer, type IncomingMessage, type Server, ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { DeskConfig } from "../Config.ts"
import { REQUEST_ID_HEADER, requestIdOf } from "../Desk/RequestId.ts"
import {
  BadRequest,
  ExpectationFailed,
  HeadersTooLarge,
  MethodNotAllowed,
  PayloadTooLarge,
  RateLimited,
  RequestTimeout,
  Unavailable
} from "../Domain/Errors.ts"
import { StartupError } from "../Domain/StartupError.ts"
import { activeRequestsConfig, type AdmissionOptions, admitted, ENDED, type RequestListener } from "./Admission.ts"
import { MAX_BODY_BYTES, OVER_LIMIT } from "./BodyGuard.ts"
import { concurrencyConfig, LINE } from "./ClientConcurrency.ts"
import { requestClientKey, TrustedProxies } from "./ClientIp.ts"
import { InFlight, ServerStop, stopServer } from "./InFlight.ts"
import { JsonParts } from "./JsonParts.ts"
import { busyError } from "./RateLimit.ts"

export interface Timeouts {
  /** Time allowed to receive a whole request, headers and body; and for the client to take a finished response. */
  readonly requestSeconds: number
}

export const timeoutsConfig: Config.Config<Timeouts> = Config.all({
  requestSeconds: Config.integer("DESK_REQUEST_TIMEOUT_SECONDS").pipe(
    Config.validate({
      message: "DESK_REQUEST_TIMEOUT_SECONDS must be between 1 and 3600",
      validation: (n) => n >= 1 && n <= 3600
    }),
    Config.withDefault(30)
  )
})

/** Node's time for a request's headers: the request timeout, at most 10 seconds. */
const headersSeconds = (timeouts: Timeouts) => Math.min(timeouts.requestSeconds, 10)

/** The desk's error envelope of `schema`, as the API encodes it. */
const envelopeOf = <A extends { readonly message: string }, I>(
  schema: Schema.Schema<A, I> & (new(props: { readonly message: string }) => A),
  message: string
) => Schema.encodeSync(schema)(new schema({ message }))

/**
 * Answers for requests Node refuses before the desk sees them, in the desk's JSON error envelope: Node's parser
 * errors (its codes), an HTTP/1.1 request without `Host`, an `Expect` other than `100-continue`, and `CONNECT`.
 */
const refusal = (code: string | undefined, timeouts: Timeouts) => {
  switch (code) {
    case "ASTERISK_FORM":
      return {
        status: "400 Bad Request",
        body: envelopeOf(BadRequest, "Only OPTIONS takes the request target *; ask for a path, such as /api/status.")
      }
    case "MISSING_HOST":
      return {
        status: "400 Bad Request",
        body: envelopeOf(BadRequest, "An HTTP/1.1 request must carry a Host header.")
      }
    case "EXPECTATION":
      return {
        status: "417 Expectation Failed",
        body: envelopeOf(ExpectationFailed, "The desk meets no Expect but 100-continue; send the request without it.")
      }
    case "CONNECT":
      return {
        status: "405 Method Not Allowed",
        body: envelopeOf(MethodNotAllowed, "The desk is no proxy: CONNECT is not answered.")
      }
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: "408 Request Timeout",
        body: envelopeOf(
          RequestTimeout,
          `The request was not received in time (its headers within ${
            headersSeconds(timeouts)
          } seconds, all of it within ${timeouts.requestSeconds}); send it again in one go.`
        )
      }
    case "NOT_SERVING":
      return {
        status: "503 Service Unavailable",
        body: envelopeOf(
          Unavailable,
          "The desk is stopping (or could not start) before serving this request; retry in a few seconds."
        )
      }
    case "TOO_LARGE":
      return {
        status: "413 Payload Too Large",
        body: envelopeOf(PayloadTooLarge, OVER_LIMIT)
      }
    case "HPE_HEADER_OVERFLOW":
      return {
        status: "431 Request Header Fields Too Large",
        body: envelopeOf(HeadersTooLarge, "The request headers are too large.")
      }
    default:
      return {
        status: "400 Bad Request",
        body: envelopeOf(BadRequest, "The request is not well-formed HTTP/1.1.")
      }
  }
}

/** A refusal written on the socket itself, for what Node could not parse as a request: it gets an id of its own. */
const rawResponse = (status: string, body: unknown, requestId: string) => {
  const json = JSON.stringify(body)
  return `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
    `X-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${json}`
}

/** The id of a request answered before the desk saw it: the caller's X-Request-Id when well-formed, as the edge's. */
const refusedRequestId = (response: ServerResponse) => requestIdOf(response.req.headers[REQUEST_ID_HEADER] as string)

/**
 * A refusal written through Node's response, for requests Node has parsed; the connection closes after it. Its
 * request id, which the answer carries as every answer does, is returned for the log line.
 */
const refuse = (response: ServerResponse, code: string, timeouts: Timeouts): string => {
  const { body, status } = refusal(code, timeouts)
  const json = JSON.stringify(body)
  const requestId = refusedRequestId(response)
  response.shouldKeepAlive = false
  response.writeHead(Number(status.slice(0, 3)), {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    [REQUEST_ID_HEADER]: requestId
  })
  response.end(json)
  return requestId
}

/**
 * A client's line of waiting reads is full: 429 `rate_limited`, as the edge answers a client past its line. Its
 * request id is returned for the log line.
 */
export const refuseBusy = (response: ServerResponse, cap: number, line: number): string => {
  const json = JSON.stringify(Schema.encodeSync(RateLimited)(busyError(cap, line)))
  const requestId = refusedRequestId(response)
  response.writeHead(429, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(json),
    "retry-after": "1",
    [REQUEST_ID_HEADER]: requestId
  })
  response.end(json)
  return requestId
}

/** Whether a request has a body Node has not received to its end. */
const bodyLeftUnread = (request: IncomingMessage | undefined) =>
  request !== undefined && !request.complete &&
  ((request.headers["content-length"] ?? "0") !== "0" || request.headers["transfer-encoding"] !== undefined)

/**
 * A response that the client must take within `ms` of the desk finishing it: Node keeps whatever the socket
 * has not accepted in memory for as long as the client does not read, so a client that never reads is cut off.
 * The clock starts at `end`, not at the request: a slow answer (a settlement waiting for its block) is not one.
 * A body in parts (src/Http/JsonParts.ts) is written part by part and ended at once, as a string body is.
 */
const responseDrainedWithin = (ms: number, inFlight: InFlight) =>
  class DrainedResponse extends ServerResponse {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    constructor(...args: Array<any>) {
      // Node passes options beside the request that its typings leave out.
      super(...(args as [IncomingMessage]))
      inFlight.track(this)
    }

    /**
     * An answer given before the request's body came in whole (a 413 on its declared length, a refusal of its
     * headers, an unknown route) closes the connection after it: kept alive, Node read and dropped the rest of the
     * body first, so a client declaring 20 GB had the desk read it for the whole request timeout.
     */
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override writeHead(...args: Array<any>): this {
      if (bodyLeftUnread(this.req)) this.shouldKeepAlive = false
      return super.writeHead(...(args as [number]))
    }

    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    override end(...args: Array<any>): this {
      if (args[0] instanceof JsonParts) {
        const { parts } = args[0]
        for (let i = 0; i < parts.length - 1; i++) this.write(parts[i])
        args[0] = parts[parts.length - 1] ?? ""
      }
      super.end(...args)
      this.emit(ENDED)
      if (!this.writableFinished) {
        const timer = setTimeout(() => this.destroy(), ms)
        timer.unref()
        const stop = () => clearTimeout(timer)
        this.once("finish", stop)
        this.once("close", stop)
      }
      return this
    }
  }

/**
 * Node's server with bounded waits: a client that trickles its headers or body (or never finishes them), or
 * does not read its response, holds a connection and a fiber for at most the request timeout, not Node's
 * default five minutes (or for ever).
 */
export const makeServer = (
  timeouts: Timeouts,
  onRefused: (code: string, requestId: string) => void = () => {},
  admission?: AdmissionOptions,
  inFlight: InFlight = new InFlight()
): Server => {
  const requestTimeout = timeouts.requestSeconds * 1000
  const server = createServer({
    ServerResponse: responseDrainedWithin(requestTimeout, inFlight),
    requestTimeout,
    headersTimeout: headersSeconds(timeouts) * 1000,
    // How often Node looks for expired requests (default 30 s, which would triple a short timeout).
    connectionsCheckingInterval: Math.min(1000, requestTimeout),
    // Node would answer these itself with an empty body; the desk answers in JSON (`holdUntilServed`).
    requireHostHeader: false
  })
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) => {
    const code = error.code ?? "unknown"
    const requestId = requestIdOf(undefined)
    if (code !== "ECONNRESET") onRefused(code, requestId)
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage
    // As Node does: answer only if no byte of a response is on the wire yet, or the client reads garbage.
    if (code !== "ECONNRESET" && socket.writable && (inFlight == null || !inFlight.headersSent)) {
      const { body, status } = refusal(code, timeouts)
      socket.write(rawResponse(status, body, requestId))
    }
    socket.destroy()
  })
  server.on("checkExpectation", (_request: IncomingMessage, response: ServerResponse) => {
    onRefused("EXPECTATION", refuse(response, "EXPECTATION", timeouts))
  })
  // `Expect: 100-continue` asks whether to send the body: not for one over the limit, which is refused unsent.
  // Any other is invited, as Node would, and served.
  server.on("checkContinue", (request: IncomingMessage, response: ServerResponse) => {
    if (Number(request.headers["content-length"] ?? "0") > MAX_BODY_BYTES) {
      return void onRefused("TOO_LARGE", refuse(response, "TOO_LARGE", timeouts))
    }
    response.writeContinue()
    server.emit("request", request, response)
  })
  server.on("connect", (request: IncomingMessage, socket: Duplex) => {
    const requestId = requestIdOf(request.headers[REQUEST_ID_HEADER] as string | undefined)
    onRefused("CONNECT", requestId)
    const { body, status } = refusal("CONNECT", timeouts)
    socket.on("error", () => {})
    socket.end(rawResponse(status, body, requestId))
  })
  refuseUpgrades(server)
  holdUntilServed(server, admission, (response, code) => {
    const requestId = refuse(response, code, timeouts)
    if (code !== "NOT_SERVING") onRefused(code, requestId)
  })
  return server
}

/**
 * The desk serves no WebSocket, so no "upgrade" listener stays on its server, and Node serves a request that asks
 * to upgrade (`Connection: Upgrade`, any `Upgrade`) as any other. The platform attaches one when it serves: a
 * request it took went around every turn, timeout and drain of the "request" path, and a long list (written in
 * parts) was never answered, its socket never closed.
 */
const refuseUpgrades = (server: Server): void => {
  server.on("newListener", (event: string | symbol, listener: (...args: Array<unknown>) => void) => {
    // newListener fires before the listener is added.
    if (event === "upgrade") queueMicrotask(() => server.off("upgrade", listener))
  })
}

/** HTTP/1.1 requires `Host` (RFC 9112 3.2); HTTP/1.0 does not. */
const hostless = (request: IncomingMessage) =>
  request.headers.host === undefined && request.httpVersionMajor === 1 && request.httpVersionMinor >= 1

/**
 * Why Node's parsed request is refused before the desk sees it: an HTTP/1.1 request without `Host`, or the target
 * `*` on a method other than OPTIONS (RFC 9112 3.2.4; Node parses it and the router took `GET *` for `GET /`).
 */
const malformed = (request: IncomingMessage): "MISSING_HOST" | "ASTERISK_FORM" | undefined =>
  hostless(request) ? "MISSING_HOST" : request.url === "*" && request.method !== "OPTIONS" ? "ASTERISK_FORM" : undefined

/** Why a request is answered by `refuse` instead of the desk: it is malformed, or it came while the server closed. */
export type Refused = "MISSING_HOST" | "ASTERISK_FORM" | "NOT_SERVING"

/**
 * The server listens as soon as its layer is built, while the API behind it is still being built; Node drops a
 * request that arrives before any "request" listener exists (it is never answered). Such requests wait here
 * and go to the desk's handler as soon as it is attached. A malformed request (`malformed`) goes to `refuse`
 * instead, which answers it, as do requests held when the server closes without ever serving.
 */
export const holdUntilServed = (
  server: Server,
  admission: AdmissionOptions | undefined,
  refuse: (response: ServerResponse, why: Refused) => void
): void => {
  const held: Array<[IncomingMessage, ServerResponse]> = []
  let closing = false
  const refuseUnserved = (response: ServerResponse) => refuse(response, "NOT_SERVING")
  const hold: RequestListener = (request, response) => {
    if (closing) return refuseUnserved(response)
    held.push([request, response])
  }
  // A desk that cannot start (its store fails) closes the server without ever serving: `close` waits for every
  // connection, and a held request's never ended, so the process hung silently for good, even to SIGTERM, and
  // never said why it could not start. Closing answers what is held, and what comes on its connections after.
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    if (server.listeners("request").includes(hold)) {
      closing = true
      for (const [, response] of held.splice(0)) refuseUnserved(response)
    }
    return close(callback)
  }) as typeof server.close
  const onListener = (event: string | symbol, listener: RequestListener) => {
    if (event !== "request" || listener === hold) return
    server.off("newListener", onListener)
    server.off("request", hold)
    // After the listener is in place (newListener fires just before), in arrival order.
    queueMicrotask(() => {
      const served: RequestListener = (request, response) => {
        const why = malformed(request)
        return why === undefined ? listener.call(server, request, response) : refuse(response, why)
      }
      const serve = inConnectionOrder(admission === undefined ? served : admitted(served, admission))
      server.off("request", listener)
      server.on("request", serve)
      for (const [request, response] of held.splice(0)) serve(request, response)
    })
  }
  server.on("request", hold)
  server.on("newListener", onListener)
}

/**
 * A pipelined request is served once the answers before it on its connection are out of the desk's memory. Node
 * hands the desk every request of a chunk at once and keeps each answer queued behind the one still being sent,
 * in memory, for as long as the client does not read: 30 clients pipelining 12 listings of 1 MB each took the
 * desk from about 150 to 375 MB RSS. Node gives a queued response its socket when the answer before it has been
 * handed to the kernel, so that is when its request goes on; a connection closed meanwhile takes the waiting
 * requests with it, unseen. A request alone on its connection (nearly all) goes on at once.
 */
export const inConnectionOrder = (listener: RequestListener): RequestListener => (request, response) => {
  if (response.socket !== null) return listener(request, response)
  response.once("socket", (socket) => {
    if (!socket.destroyed) listener(request, response)
  })
}

/** Why the server could not listen, naming the variable to change. */
const listenFailure = (host: string, port: number, error: unknown) => {
  let cause = error
  while (cause instanceof Error && !Predicate.hasProperty(cause, "code") && cause.cause !== undefined) {
    cause = cause.cause
  }
  const code = Predicate.hasProperty(cause, "code") ? String(cause.code) : ""
  const message = code === "ENOTFOUND" || code === "EAI_AGAIN"
    ? `HOST ${host} does not resolve to an address to listen on (getaddrinfo ${code})`
    : code === "EADDRNOTAVAIL"
    ? `HOST ${host} is not an address of this machine (EADDRNOTAVAIL)`
    : code === "EADDRINUSE"
    ? `PORT ${port} on ${host} is already in use (EADDRINUSE); stop what listens there or set another PORT`
    : code === "EACCES"
    ? `PORT ${port} needs privileges this process lacks (EACCES); use a port above 1023`
    : `cannot listen on HOST ${host}, PORT ${port}: ${cause instanceof Error ? cause.message : String(cause)}`
  return new StartupError({ message })
}

/** The Node HTTP server on HOST:PORT with the configured timeouts, letting reads in by turns (src/Http/Admission.ts). */
export const layerConfig = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* DeskConfig
    const timeouts = yield* timeoutsConfig
    const active = yield* activeRequestsConfig
    const trusted = yield* TrustedProxies
    const runtime = yield* Effect.runtime<never>()
    const log = (code: string, requestId: string) =>
      Runtime.runFork(runtime)(Effect.logInfo("Refused HTTP request", code).pipe(Effect.annotateLogs({ requestId })))
    const perClient = yield* concurrencyConfig
    const admission: AdmissionOptions = {
      active,
      clientOf: (request) => requestClientKey(request, trusted),
      perClient,
      line: {
        size: LINE,
        refuse: (response) => log("LINE_FULL", refuseBusy(response, perClient, LINE))
      }
    }
    const inFlight = new InFlight()
    let server: Server | undefined
    // Stopped by the desk's HTTP layer (src/Http/Server.ts) before the services and the store behind it close: the
    // server itself closes last, long after them. A request takes at most the request timeout to finish.
    const stop = Effect.suspend(() =>
      server === undefined ? Effect.void : stopServer(server, inFlight, Duration.seconds(timeouts.requestSeconds))
    )
    return NodeHttpServer.layer(() => (server = makeServer(timeouts, log, admission, inFlight)), {
      port: config.port,
      host: config.host
    }).pipe(
      Layer.catchAll((error) => Layer.fail(listenFailure(config.host, config.port, error))),
      Layer.merge(Layer.succeed(ServerStop, stop))
    )
  })
)
