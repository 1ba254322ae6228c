import { HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as MemoryRateStore from "../../adapters/ratelimit/Memory.ts"
import { ClientConcurrency, make } from "../../src/Http/ClientConcurrency.ts"
import { requestClientKey, TrustedProxies } from "../../src/Http/ClientIp.ts"
import { makeEdge } from "../../src/Http/Edge.ts"
import { makeServer } from "../../src/Http/NodeServer.ts"
import { RateLimiter, type RatePolicy, type RateStore } from "../../src/RateLimiter.ts"

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Counts every call into the real ClientConcurrency, so a test can check they balance once all is quiet. */
const instrumented = (cap: number, line?: number) => {
  const inner = make(cap, line)
  const counts = { entered: 0, refused: 0, left: 0, joined: 0, abandoned: 0 }
  const outer: ReturnType<typeof make> = {
    ...inner,
    enter: (key) => {
      const ok = inner.enter(key)
      if (ok) counts.entered++
      else counts.refused++
      return ok
    },
    join: (key) => {
      const waiter = inner.join(key)
      if (waiter !== undefined) counts.joined++
      return waiter
    },
    abandon: (key, waiter) => {
      counts.abandoned++
      inner.abandon(key, waiter)
    },
    leave: (key) => {
      counts.left++
      inner.leave(key)
    }
  }
  /** How many of `key`'s slots are free now (probed with enter, then given back), and whether its line is empty. */
  const freeSlots = (key: string) => {
    let n = 0
    while (n < cap + 1 && inner.enter(key)) n++
    for (let i = 0; i < n; i++) inner.leave(key)
    return n
  }
  return { service: outer, counts, freeSlots, inner }
}

/** A store that answers like memory, `delayMs` late and never at once: as Redis over a link does. */
const slowStore = (delayMs: number) =>
  Effect.map(MemoryRateStore.make, (memory): RateStore => ({
    take: (key, limit, windowMicros) =>
      Effect.zipRight(Effect.sleep(delayMs), Effect.sync(() => memory.takeNow!(key, limit, windowMicros)))
  }))

/** Answers after the `ms` query parameter's milliseconds (100 by default). */
const sleepy = Effect.gen(function*() {
  const params = yield* HttpServerRequest.ParsedSearchParams
  yield* Effect.sleep(Number(params.ms ?? "100"))
  return yield* HttpServerResponse.json({ ok: true })
})

const app = HttpRouter.empty.pipe(
  HttpRouter.get("/api/quick", HttpServerResponse.json({ ok: true })),
  HttpRouter.get("/api/sleep", sleepy),
  // A stand-in for a preview by id: a read that goes in without a turn (src/Desk/RequestRules.ts), taking `ms`.
  HttpRouter.get("/api/handoffs/:id", sleepy),
  HttpRouter.get("/api/broken", Effect.die("boom")),
  HttpRouter.post(
    "/api/post",
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const text = yield* request.text
      return yield* HttpServerResponse.json({ ok: true, url: request.url, length: text.length })
    })
  ),
  HttpRouter.post(
    "/api/sleep",
    Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      yield* request.text
      yield* Effect.sleep(300)
      return yield* HttpServerResponse.json({ ok: true })
    })
  )
)

interface HarnessOptions {
  readonly cap: number
  readonly line?: number
  /** Admission in front (as the desk's server has): at most `active` reads inside, `cap` per client. */
  readonly active?: number
  readonly policy?: RatePolicy
  readonly limiter?: Layer.Layer<RateLimiter>
  readonly requestSeconds?: number
}

/** The desk's edge (and optionally its admission) over a small app, on 127.0.0.1; clients named by X-Forwarded-For. */
export const harness = async (options: HarnessOptions) => {
  const concurrency = instrumented(options.cap, options.line)
  const trusted = ["::ffff:127.0.0.1", "127.0.0.1"]
  const trustedLayer = TrustedProxies.layer(trusted)
  const trustedService = Effect.runSync(Effect.provide(TrustedProxies, trustedLayer))
  const server = () =>
    makeServer(
      { requestSeconds: options.requestSeconds ?? 30 },
      () => {},
      options.active === undefined ? undefined : {
        active: options.active,
        perClient: options.cap,
        clientOf: (request) => requestClientKey(request, trustedService)
      }
    )
  const limiter = options.limiter ?? MemoryRateStore.layer(options.policy ?? { limit: 1_000_000, windowSeconds: 60 })
  const live = Layer.unwrapEffect(Effect.map(makeEdge, (edge) => HttpServer.serve(app, edge))).pipe(
    Layer.provide(limiter),
    Layer.provide(trustedLayer),
    Layer.provide(Layer.succeed(ClientConcurrency, concurrency.service)),
    Layer.provideMerge(NodeHttpServer.layer(server, { host: "127.0.0.1", port: 0 }))
  )
  const runtime = ManagedRuntime.make(live)
  const address = await runtime.runPromise(HttpServer.addressWith(Effect.succeed))
  if (address._tag !== "TcpAddress") throw new Error("tcp expected")
  const url = `http://127.0.0.1:${address.port}`
  return {
    url,
    port: address.port,
    concurrency,
    send: async (path: string, from: string, init: RequestInit & { timeoutMs?: number } = {}) => {
      const { timeoutMs, ...rest } = init
      const started = Date.now()
      try {
        const response = await fetch(`${url}${path}`, {
          ...rest,
          headers: { "x-forwarded-for": from, connection: "close", ...(rest.headers as Record<string, string>) },
          signal: rest.signal ?? AbortSignal.timeout(timeoutMs ?? 10_000)
        })
        const text = await response.text()
        return { status: response.status, headers: response.headers, text, ms: Date.now() - started }
      } catch (error) {
        return { status: -1, headers: new Headers(), text: String(error), ms: Date.now() - started }
      }
    },
    close: () => runtime.dispose()
  }
}

/** A slow-store rate limiter layer (no takeNow), as with REDIS_URL. */
export const slowLimiter = (delayMs: number, policy: RatePolicy = { limit: 1_000_000, windowSeconds: 60 }) =>
  Layer.effect(RateLimiter, Effect.flatMap(slowStore(delayMs), (store) => RateLimiter.make(policy, store)))
