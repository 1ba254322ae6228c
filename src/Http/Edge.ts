import { type HttpApp, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Context, Effect } from "effect"
import type { ServerResponse } from "node:http"
import { REQUEST_ID_HEADER, requestIdOf } from "../Desk/RequestId.ts"
import { isRateLimited, readsBody, waitsForTurn } from "../Desk/RequestRules.ts"
import { InvalidQuery, type Issue } from "../Domain/Errors.ts"
import { type RateDecision, RateLimiter } from "../RateLimiter.ts"
import { AccessLines, logWhenDone } from "./AccessLog.ts"
import { ENDED } from "./Admission.ts"
import type { RouteTest } from "./AllowedMethods.ts"
import { guardBody, type JsonRefusal } from "./BodyGuard.ts"
import { ClientConcurrency, turnOf, type Waiter } from "./ClientConcurrency.ts"
import { requestClientKey, TrustedProxies } from "./ClientIp.ts"
import { emptyParamsLeftOut } from "./EmptyParams.ts"
import { badlyEncodedQuery } from "./QueryEncoding.ts"
import { busy, busyReading, rateLimitHeaders, refusal } from "./RateLimit.ts"
import { errorResponse } from "./Respond.ts"

/** What the edge knows of the API's routes; each has a default for the tests' own small apps. */
export interface EdgeRoutes {
  /** The requests a route takes: no other has its body judged before the router answers it. */
  readonly isRoute?: RouteTest
  /** The routes that act as an identity: their X-AGENT-ID is judged before their body is read. */
  readonly actsAsAgent?: RouteTest
  /** The paths that refuse a body that is no JSON in words of their own (JSON-RPC at /mcp). */
  readonly jsonRefusalAt?: (method: string, path: string) => JsonRefusal | undefined
  /**
   * Whether a request's route reads the query parameter `name`: the others are ignored, as unknown ones are (all of
   * a request no route takes).
   */
  readonly readsParam?: (method: string, url: string, name: string) => boolean
  /** A route's own answer to a query parameter that is not UTF-8 (a page for a browser), else the JSON 422. */
  readonly queryRefusal?: (
    request: HttpServerRequest.HttpServerRequest,
    issue: Issue
  ) => HttpServerResponse.HttpServerResponse | undefined
}

const invalidQuery = (issue: Issue) =>
  errorResponse(
    InvalidQuery,
    new InvalidQuery({ message: `Invalid query parameter: ${issue.path}: ${issue.message}.`, issues: [issue] })
  )

/** A read, its query refused when a parameter it reads is not UTF-8, else with its empty parameters left out. */
const readingQuery = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  app: HttpApp.Default<E, R>,
  { queryRefusal, readsParam = () => true }: EdgeRoutes
) => {
  const issue = badlyEncodedQuery(request.url, (name) => readsParam(request.method, request.url, name))
  if (issue === undefined) return emptyParamsLeftOut(request, app)
  return Effect.succeed(queryRefusal?.(request, issue) ?? invalidQuery(issue))
}

const setHeaders = (response: ServerResponse, headers: Record<string, string>) => {
  for (const name in headers) response.setHeader(name, headers[name]!)
}

/**
 * What every request passes through before the API: a request id, the per-client concurrency cap, the rate
 * limit, the body checks and one access-log line. One middleware rather than four, with its services looked up
 * once: as four HttpMiddlewares they cost about half the CPU of a preview.
 *
 * It runs on every request, so it is written in as few effect steps as it can be (each costs a few
 * microseconds): a limited request takes its per-client slot and, from a store in memory, its rate-limit
 * decision with none, and an observer of its fiber gives the slot back. Its headers (the request id, the rate
 * limit's) go onto Node's response before the API answers: Node joins them with the answer's own, whoever makes
 * it (the API, its error encoder, the body checks, a 429 from here), so no response is copied to carry them. Lines
 * logged while the request is worked on read the id from there (src/Desk/RequestId.ts), so the request's fiber
 * carries nothing more; the access line is written by Node's response when it is done (src/Http/AccessLog.ts), off
 * the fiber. Removing the edge altogether took a no-database request from about 2x the empty HttpApi endpoint's
 * CPU to 1.1x. `routes` says what it needs to know of the API's routes (EdgeRoutes).
 */
export const edgeFor = (routes: EdgeRoutes = {}) =>
  Effect.gen(function*() {
    const limiter = yield* RateLimiter
    const trusted = yield* TrustedProxies
    const concurrency = yield* ClientConcurrency
    const lines = yield* Effect.serviceOption(AccessLines)

    return <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
      Effect.withFiberRuntime((fiber) => {
        const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
        const response = NodeHttpServerRequest.toServerResponse(request)
        const id = requestIdOf(request.headers[REQUEST_ID_HEADER])
        response.setHeader(REQUEST_ID_HEADER, id)
        logWhenDone(lines, fiber, request, response, id)
        const path = request.url.split("?")[0]!
        // A request with a body reads no query parameters; the body guard hands the app a request of its own. A
        // request no route takes is the router's 404 (or 405), whatever its body or query (no route reads a query
        // parameter of it). Looked up only for a body: a read pays for it only when its query has a bad escape.
        const answer = !readsBody(request.method)
          ? readingQuery(request, app, routes)
          : routes.isRoute?.(request.method, request.url) === false
          ? app
          : guardBody(
            request,
            app,
            routes.actsAsAgent?.(request.method, request.url) ?? false,
            routes.jsonRefusalAt?.(request.method, path)
          )
        if (!isRateLimited(request.method, path)) return answer
        const key = requestClientKey(NodeHttpServerRequest.toIncomingMessage(request), trusted)
        const entered = concurrency.enter(key)
        // Refused before the budget is touched: a client whose line is full is not charged for knocking. Reads wait
        // their turn before the app (src/Http/Admission.ts, a client's reads at most `cap` at once), so a read past the
        // cap here (its client's other requests hold the slots) is refused rather than holding a turn while it waits.
        if (!entered && !concurrency.hasRoom(key)) return Effect.succeed(busy(concurrency.cap, concurrency.line))
        if (!entered && waitsForTurn(request.method, path)) return Effect.succeed(busyReading(concurrency.cap))
        // Given back when its answer is ended (before the turn it held is handed on, so the read let in next finds the
        // slot free), or when its fiber ends, however it ends: its observers run once it has exited, after its last
        // finalizer. Nothing runs between taking the slot and this line, so nothing can keep it for good.
        // A waiter's slot is handed to it while it waits: given back the same way once granted, else its place is.
        const holdSlot = (waiter?: Waiter) => {
          let held = true
          const giveBack = () => {
            if (!held) return
            held = false
            if (waiter === undefined || waiter.granted) concurrency.leave(key)
            else concurrency.abandon(key, waiter)
          }
          response.prependOnceListener(ENDED, giveBack)
          fiber.addObserver(giveBack)
        }
        if (entered) holdSlot()
        const decided = (decision: RateDecision) => {
          setHeaders(response, rateLimitHeaders(limiter.policy, decision))
          if (!decision.allowed) return Effect.succeed(refusal(limiter.policy, decision))
          if (entered) return answer
          // A store that answers later (Redis) may have let every request in progress finish meanwhile: a free slot
          // is taken now, as no one would ever hand it over in the line.
          if (concurrency.enter(key)) {
            holdSlot()
            return answer
          }
          // Charged, then served once one of its client's requests in progress hands it a slot.
          const waiter = concurrency.join(key)
          if (waiter === undefined) return Effect.succeed(busy(concurrency.cap, concurrency.line))
          holdSlot(waiter)
          // The platform runs the app uninterruptibly; the wait alone gives way to a client that hangs up.
          return Effect.zipRight(Effect.interruptible(turnOf(waiter)), answer)
        }
        // A store in this process's memory answers at once: no effect steps for it.
        return limiter.consumeNow === undefined
          ? Effect.flatMap(limiter.consume(key), decided)
          : decided(limiter.consumeNow(key))
      })
  })

/** The edge of an app none of whose routes acts as an identity (the tests' own small apps). */
export const makeEdge = edgeFor()
