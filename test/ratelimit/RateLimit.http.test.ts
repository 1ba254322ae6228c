import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Either, Fiber, Layer, Option } from "effect"
import { createServer } from "node:http"
import * as MemoryRateStore from "../../adapters/ratelimit/Memory.ts"
import { isRateLimited } from "../../src/Desk/RequestRules.ts"
import { ClientConcurrency } from "../../src/Http/ClientConcurrency.ts"
import { clientIp, normalizeIp, rateKeyOf, TrustedProxies } from "../../src/Http/ClientIp.ts"
import { makeEdge } from "../../src/Http/Edge.ts"

/** Requests to /api/slow count themselves in, then wait here until a test opens the gate. */
const gate = Effect.runSync(Deferred.make<void>())
let slowArrived = 0

const app = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/api/slow",
    Effect.zipRight(
      Effect.zipRight(Effect.sync(() => slowArrived++), Deferred.await(gate)),
      HttpServerResponse.json({ ok: true })
    )
  ),
  HttpRouter.get("/api/health", HttpServerResponse.json({ ok: true })),
  HttpRouter.get("/api/things", HttpServerResponse.json({ ok: true, things: [] })),
  HttpRouter.get("/api/broken", Effect.die("boom")),
  HttpRouter.post("/mcp", HttpServerResponse.json({ jsonrpc: "2.0", id: 1, result: {} })),
  HttpRouter.get("/llms.txt", HttpServerResponse.text("# Handoff Desk"))
)

/** 3 per 2 seconds: a window short enough that waiting out a real Retry-After keeps the test quick. */
const Desk = (trustedProxies: ReadonlyArray<string>) =>
  Layer.unwrapEffect(Effect.map(makeEdge, (edge) => HttpServer.serve(app, edge))).pipe(
    Layer.provide(MemoryRateStore.layer({ limit: 3, windowSeconds: 2 })),
    Layer.provide(TrustedProxies.layer(trustedProxies)),
    Layer.provide(ClientConcurrency.layer(2, 1)),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
  )

const send = (path: string, init: { method?: string; forwardedFor?: string } = {}) =>
  HttpServer.addressWith((address) =>
    Effect.promise(async () => {
      if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
      const response = await fetch(`http://127.0.0.1:${address.port}${path}`, {
        method: init.method ?? "GET",
        headers: {
          ...(init.forwardedFor === undefined ? {} : { "x-forwarded-for": init.forwardedFor }),
          ...(init.method === "POST" ? { "content-type": "application/json" } : {})
        },
        ...(init.method === "POST" ? { body: "{}" } : {})
      })
      return { status: response.status, headers: response.headers, body: await response.json().catch(() => null) }
    })
  )

const exhaust = (forwardedFor?: string) =>
  Effect.repeatN(send("/api/things", forwardedFor === undefined ? {} : { forwardedFor }), 2)

// The layer is built without test services: the limiter must see real time for Retry-After to be checked.
layer(Desk([]), { excludeTestServices: true })("a peer that is not a trusted proxy", (it) => {
  it.effect("a spoofed X-Forwarded-For does not buy a fresh budget", () =>
    Effect.gen(function*() {
      yield* exhaust("198.51.100.1")
      const spoofed = yield* send("/api/things", { forwardedFor: "203.0.113.99" })
      expect(spoofed.status).toBe(429)
    }))

  it.effect("health and discovery documents are never limited", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 5; i++) {
        const health = yield* send("/api/health")
        expect(health.status).toBe(200)
        expect(health.headers.get("ratelimit")).toBeNull()
        expect((yield* send("/llms.txt")).status).toBe(200)
      }
    }))
})

layer(Desk(["::ffff:127.0.0.1"]), { excludeTestServices: true })("behind a trusted proxy", (it) => {
  it.effect("every limited response carries RateLimit-Policy and RateLimit", () =>
    Effect.gen(function*() {
      const first = yield* send("/api/things", { forwardedFor: "192.0.2.1" })
      expect(first.status).toBe(200)
      expect(first.headers.get("ratelimit-policy")).toBe(`"default";q=3;w=2`)
      expect(first.headers.get("ratelimit")).toBe(`"default";r=2;t=2`)
      const second = yield* send("/mcp", { method: "POST", forwardedFor: "192.0.2.1" })
      expect(second.headers.get("ratelimit")).toBe(`"default";r=1;t=2`)
      const failed = yield* send("/api/broken", { forwardedFor: "192.0.2.1" })
      expect(failed.status).toBe(500)
      expect(failed.headers.get("ratelimit")).toBe(`"default";r=0;t=2`)
    }))

  it.effect("answers 429 with a JSON body and a Retry-After that holds", () =>
    Effect.gen(function*() {
      yield* exhaust("192.0.2.2")
      const refused = yield* send("/api/things", { forwardedFor: "192.0.2.2" })
      expect(refused.status).toBe(429)
      expect(refused.headers.get("content-type")).toMatch(/^application\/json/)
      expect(refused.headers.get("retry-after")).toBe("2")
      expect(refused.headers.get("ratelimit")).toBe(`"default";r=0;t=2`)
      expect(refused.body).toEqual({
        ok: false,
        error: "rate_limited",
        message: "This address has used its 3 requests per 2 seconds; retry in 2 seconds."
      })
      yield* Effect.sleep(Duration.seconds(2))
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.2" })).status).toBe(200)
    }))

  it.effect("each forwarded client has its own budget", () =>
    Effect.gen(function*() {
      yield* exhaust("192.0.2.3")
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.3" })).status).toBe(429)
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.4" })).status).toBe(200)
    }))

  it.effect("a client with 2 requests in progress waits in line for a third; past its line, 429 uncharged", () =>
    Effect.gen(function*() {
      const held = yield* Effect.fork(Effect.all([
        send("/api/slow", { forwardedFor: "192.0.2.8" }),
        send("/api/slow", { forwardedFor: "192.0.2.8" })
      ], { concurrency: "unbounded" }))
      while (slowArrived < 2) yield* Effect.sleep("10 millis")
      // A read past the cap with nobody in the line: refused as a read that does not wait, not as a full line.
      const read = yield* send("/api/things", { forwardedFor: "192.0.2.8" })
      expect(read.status).toBe(429)
      expect(read.body).toMatchObject({
        message: "This address has 2 requests in progress, the most one client may have at once, and a read of the " +
          "catalog does not wait behind them; retry in 1 second, or once one of them has finished."
      })
      const waiting = yield* Effect.fork(send("/mcp", { method: "POST", forwardedFor: "192.0.2.8" }))
      yield* Effect.sleep("200 millis")
      // Its line holds one: the next is refused, before the budget is touched (no rate-limit headers).
      const busy = yield* send("/mcp", { method: "POST", forwardedFor: "192.0.2.8" })
      expect(busy.status).toBe(429)
      expect(busy.headers.get("retry-after")).toBe("1")
      expect(busy.headers.get("ratelimit")).toBeNull()
      expect(busy.body).toMatchObject({
        ok: false,
        error: "rate_limited",
        message: expect.stringContaining("2 requests in progress, the most one client may have at once, and 1 more")
      })
      expect(Option.isNone(yield* Fiber.poll(waiting))).toBe(true)
      // A read past the cap waits for its turn before the app (src/Http/Admission.ts), never in the line here.
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.8" })).status).toBe(429)
      // Another client, even one of the same IPv4 /24, is not held up.
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.9" })).status).toBe(200)
      yield* Deferred.succeed(gate, undefined)
      expect((yield* Fiber.join(held)).map((_) => _.status)).toEqual([200, 200])
      const served = yield* Fiber.join(waiting)
      expect(served.status).toBe(200)
      // It was charged when it joined the line: the third of three.
      expect(served.headers.get("ratelimit")).toBe(`"default";r=0;t=2`)
    }))

  it.effect("a request that fails gives its slot back", () =>
    Effect.gen(function*() {
      // Two failures would fill the cap of 2 if either kept its slot; the third request is within the budget.
      expect((yield* send("/api/broken", { forwardedFor: "192.0.2.20" })).status).toBe(500)
      expect((yield* send("/api/broken", { forwardedFor: "192.0.2.20" })).status).toBe(500)
      const after = yield* send("/api/things", { forwardedFor: "192.0.2.20" })
      expect(after.status).toBe(200)
      expect(after.headers.get("ratelimit")).toBe(`"default";r=0;t=2`)
    }))

  it.effect("IPv6 clients share one budget per /64; IPv4 clients have one each", () =>
    Effect.gen(function*() {
      yield* exhaust("2001:db8:1:2::1")
      for (
        const sameNetwork of ["2001:db8:1:2::2", "2001:db8:1:2:ffff:ffff:ffff:fffe", "2001:0DB8:0001:0002:0:0:0:9"]
      ) {
        expect((yield* send("/api/things", { forwardedFor: sameNetwork })).status).toBe(429)
      }
      expect((yield* send("/api/things", { forwardedFor: "2001:db8:1:3::1" })).status).toBe(200)
      yield* exhaust("192.0.2.6")
      expect((yield* send("/api/things", { forwardedFor: "192.0.2.7" })).status).toBe(200)
    }))

  it.effect("entries the client wrote left of the proxy's own are ignored", () =>
    Effect.gen(function*() {
      yield* exhaust("192.0.2.5")
      const spoofed = yield* send("/api/things", { forwardedFor: "203.0.113.7, 192.0.2.5" })
      expect(spoofed.status).toBe(429)
    }))
})

describe("clientIp", () => {
  const trusted = new Set(["10.0.0.1", "10.0.0.2"])

  it("uses the socket address of an untrusted peer, whatever it forwards", () => {
    expect(clientIp("203.0.113.1", "1.1.1.1", trusted)).toBe("203.0.113.1")
    expect(clientIp("::ffff:203.0.113.1", undefined, trusted)).toBe("203.0.113.1")
    expect(clientIp(undefined, "1.1.1.1", trusted)).toBe("unknown")
  })

  it("takes the right-most untrusted hop behind trusted proxies", () => {
    expect(clientIp("10.0.0.1", "6.6.6.6, 198.51.100.9, 10.0.0.2", trusted)).toBe("198.51.100.9")
    expect(clientIp("::ffff:10.0.0.1", "198.51.100.9", trusted)).toBe("198.51.100.9")
    expect(clientIp("10.0.0.1", "10.0.0.2", trusted)).toBe("10.0.0.2")
    expect(clientIp("10.0.0.1", "6.6.6.6, not-an-ip, 10.0.0.2", trusted)).toBe("10.0.0.2")
  })

  it("spells one address one way", () => {
    expect(normalizeIp("::FFFF:7f00:1")).toBe("127.0.0.1")
    expect(normalizeIp("[2001:DB8:0:0:0:0:0:1]:443")).toBe("2001:db8::1")
    expect(normalizeIp("192.0.2.1:8080")).toBe("192.0.2.1")
    expect(normalizeIp("localhost")).toBeUndefined()
  })

  it("rejects a DESK_TRUST_PROXY entry that is not an IP address", () => {
    const read = (value: string) =>
      Effect.runSyncExit(
        Effect.either(TrustedProxies.pipe(
          Effect.provide(TrustedProxies.layerConfig),
          Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DESK_TRUST_PROXY", value]])))
        ))
      )
    expect(read("10.0.0.1, ::ffff:10.0.0.2")).toMatchObject({ value: Either.right(new Set(["10.0.0.1", "10.0.0.2"])) })
    expect(read("10.0.0.1, proxy.internal")).toMatchObject({ value: { _tag: "Left" } })
  })
})

describe("rateKeyOf", () => {
  it("keys IPv6 by its /64 and IPv4 by its address", () => {
    expect(rateKeyOf("2001:db8:1:2:3:4:5:6")).toBe("2001:db8:1:2::/64")
    expect(rateKeyOf("2001:db8::1")).toBe("2001:db8:0:0::/64")
    expect(rateKeyOf("::1")).toBe("0:0:0:0::/64")
    expect(rateKeyOf("fe80:1:2:3::")).toBe("fe80:1:2:3::/64")
    expect(rateKeyOf("203.0.113.9")).toBe("203.0.113.9")
    expect(rateKeyOf("unknown")).toBe("unknown")
  })
})

describe("isRateLimited", () => {
  it("exempts only reads of health and discovery documents", () => {
    expect(isRateLimited("GET", "/api/health")).toBe(false)
    expect(isRateLimited("GET", "/openapi.json")).toBe(false)
    expect(isRateLimited("GET", "/.well-known/agent.json")).toBe(false)
    expect(isRateLimited("POST", "/mcp")).toBe(true)
    expect(isRateLimited("POST", "/api/health")).toBe(true)
    expect(isRateLimited("GET", "/api/handoffs")).toBe(true)
    expect(isRateLimited("GET", "/api/health/")).toBe(true)
  })
})
