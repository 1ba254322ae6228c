import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Cause, Effect, Fiber, HashMap, Layer, Logger } from "effect"
import { createServer, request as httpRequest } from "node:http"
import * as MemoryRateStore from "../../adapters/ratelimit/Memory.ts"
import { internalFailure } from "../../src/Desk/InternalFailure.ts"
import { AccessLines } from "../../src/Http/AccessLog.ts"
import { ClientConcurrency } from "../../src/Http/ClientConcurrency.ts"
import { TrustedProxies } from "../../src/Http/ClientIp.ts"
import { makeEdge } from "../../src/Http/Edge.ts"
import * as JsonLogger from "../../src/JsonLogger.ts"

/** Requests to /api/hang never get an answer: their client gives up. */
let hanging = 0

const app = HttpRouter.empty.pipe(
  HttpRouter.get("/llms.txt", HttpServerResponse.text("# Handoff Desk")),
  HttpRouter.get("/api/things", HttpServerResponse.json({ ok: true })),
  HttpRouter.post("/api/things", HttpServerResponse.json({ ok: true })),
  HttpRouter.get("/api/broken", Effect.die("boom")),
  // What the desk's failure mapping answers for a defect: the request id the edge annotated the fiber with.
  HttpRouter.get(
    "/api/failing",
    Effect.flatMap(
      internalFailure("test failure", Cause.die("boom")),
      (error) => HttpServerResponse.json({ requestId: error.requestId }, { status: 500 })
    )
  ),
  HttpRouter.get("/api/hang", Effect.zipRight(Effect.sync(() => hanging++), Effect.never)),
  // Lines logged while a request is worked on: by its own fiber and by one it forks.
  HttpRouter.get(
    "/api/logs",
    Effect.gen(function*() {
      yield* Effect.log("inside")
      yield* Fiber.join(yield* Effect.fork(Effect.logWarning("forked")))
      return yield* HttpServerResponse.json({ ok: true })
    })
  )
)

/** 3 requests per minute, 1 in progress per client: the 429s are easy to reach. */
const edged = (extra: Layer.Layer<never> | Layer.Layer<AccessLines>) =>
  Layer.unwrapEffect(Effect.map(makeEdge, (edge) => HttpServer.serve(app, edge))).pipe(
    Layer.provide(MemoryRateStore.layer({ limit: 3, windowSeconds: 60 })),
    Layer.provide(TrustedProxies.layer(["::ffff:127.0.0.1", "127.0.0.1"])),
    Layer.provide(ClientConcurrency.layer(1)),
    Layer.provide(extra),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }))
  )

interface Sent {
  readonly status: number
  readonly requestId: string | undefined
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly text: string
}

/** A raw request (fetch would refuse or normalise some of these), answered or given up after `abortAfterMs`. */
const send = (
  path: string,
  init: {
    method?: string
    headers?: Record<string, string>
    body?: string
    abortAfterMs?: number
  } = {}
) =>
  HttpServer.addressWith((address) =>
    Effect.async<Sent | "aborted">((resume) => {
      if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
      const request = httpRequest({
        host: "127.0.0.1",
        port: address.port,
        path,
        method: init.method ?? "GET",
        headers: { "x-forwarded-for": "192.0.2.7", ...init.headers }
      }, (response) => {
        let text = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (text += chunk))
        response.on("end", () =>
          resume(Effect.succeed({
            status: response.statusCode!,
            requestId: response.headers["x-request-id"] as string | undefined,
            headers: response.headers,
            text
          })))
      })
      request.on("error", () => resume(Effect.succeed("aborted" as const)))
      if (init.abortAfterMs !== undefined) setTimeout(() => request.destroy(), init.abortAfterMs)
      request.end(init.body)
    })
  )

const answered = (sent: Sent | "aborted"): Sent => {
  if (sent === "aborted") throw new Error("expected an answer")
  return sent
}

/** Lines are written when Node is done with a response, just after the client has it. */
const settle = Effect.sleep("100 millis")

const lines: Array<string> = []
const parsed = () => lines.map((line) => JSON.parse(line))

layer(edged(Layer.succeed(AccessLines, (line) => lines.push(line))), { excludeTestServices: true })(
  "the edge, with access lines",
  (it) => {
    it.effect("every answer carries its X-Request-Id, and its one access line names it with the answer's status", () =>
      Effect.gen(function*() {
        lines.length = 0
        const answers = [
          answered(yield* send("/llms.txt", { headers: { "x-forwarded-for": "192.0.2.1" } })),
          answered(yield* send("/api/nowhere", { headers: { "x-forwarded-for": "192.0.2.2" } })),
          answered(yield* send("/api/broken", { headers: { "x-forwarded-for": "192.0.2.3" } })),
          answered(
            yield* send("/api/things", {
              method: "POST",
              headers: { "x-forwarded-for": "192.0.2.4", "content-type": "application/json" },
              body: "{not json"
            })
          )
        ]
        // A client over its budget: its 429 carries the id and the rate limit's headers.
        for (let i = 0; i < 3; i++) yield* send("/api/things", { headers: { "x-forwarded-for": "192.0.2.5" } })
        const refused = answered(yield* send("/api/things", { headers: { "x-forwarded-for": "192.0.2.5" } }))
        answers.push(refused)
        expect(answers.map((_) => _.status)).toEqual([200, 404, 500, 400, 429])
        expect(refused.headers["ratelimit-policy"]).toBe(`"default";q=3;w=60`)
        expect(refused.headers["retry-after"]).toBeDefined()
        const ids = answers.map((_) => _.requestId)
        expect(ids.every((id) => typeof id === "string" && id.length > 0)).toBe(true)
        expect(new Set(ids).size).toBe(ids.length)

        yield* settle
        const logged = parsed()
        expect(logged).toHaveLength(answers.length + 3)
        for (const answer of answers) {
          const line = logged.find((_) => _.annotations.requestId === answer.requestId)
          expect(line).toMatchObject({ message: "Sent HTTP response", logLevel: "INFO" })
          expect(line.annotations["http.status"]).toBe(answer.status)
          expect(typeof line.spans.http).toBe("number")
          expect(Number.isNaN(Date.parse(line.timestamp))).toBe(false)
        }
      }))

    it.effect("a well-formed X-Request-Id is kept, anything else is replaced", () =>
      Effect.gen(function*() {
        const kept = answered(yield* send("/llms.txt", { headers: { "x-request-id": "trace-42.a:b_c" } }))
        expect(kept.requestId).toBe("trace-42.a:b_c")
        // An agent id is a bearer identity, never written to the log in full: one sent as a request id is not kept.
        const agentIds = [`did:desk:${"ab".repeat(16)}`, `trace-DID:DESK:${"0".repeat(32)}`]
        for (const bad of ["has space", "x".repeat(129), "quote\"d", ...agentIds]) {
          const replaced = answered(yield* send("/llms.txt", { headers: { "x-request-id": bad } }))
          expect(replaced.requestId).not.toBe(bad)
          expect(replaced.requestId).toMatch(/^[0-9a-f-]{36}$/)
        }
      }))

    it.effect("an internal failure's answer names the request id its response carries", () =>
      Effect.gen(function*() {
        const failed = answered(yield* send("/api/failing", { headers: { "x-forwarded-for": "192.0.2.9" } }))
        expect(failed.status).toBe(500)
        expect(JSON.parse(failed.text).requestId).toBe(failed.requestId)
      }))

    it.effect("a URL that decodes to quotes, backslashes or a line break stays one line of JSON, ids masked", () =>
      Effect.gen(function*() {
        lines.length = 0
        const path = "/llms.txt?q=%22%5C%0A%7D%2C%22injected%22%3Atrue&payer=did:desk:0123456789abcdef0123456789abcdef"
        answered(yield* send(path))
        yield* settle
        expect(lines).toHaveLength(1)
        expect(lines[0]).not.toContain("\n")
        const [line] = parsed()
        expect(line.injected).toBeUndefined()
        expect(line.annotations["http.url"]).toBe("/llms.txt?q=\"\\\n},\"injected\":true&payer=did:desk:0123…cdef")
      }))

    it.effect("a client that leaves before its answer is logged as 499, once", () =>
      Effect.gen(function*() {
        lines.length = 0
        const before = hanging
        expect(yield* send("/api/hang", { headers: { "x-forwarded-for": "192.0.2.10" }, abortAfterMs: 200 })).toBe(
          "aborted"
        )
        expect(hanging).toBe(before + 1)
        yield* settle
        expect(parsed().map((_) => [_.annotations["http.url"], _.annotations["http.status"]])).toEqual([
          ["/api/hang", 499]
        ])
        // Its slot is free again: the same client is answered.
        expect(answered(yield* send("/api/things", { headers: { "x-forwarded-for": "192.0.2.10" } })).status).toBe(
          200
        )
      }))
  }
)

describe("the per-client slot", () => {
  layer(edged(Layer.empty), { excludeTestServices: true })("is given back however the request ends", (it) => {
    it.effect("after an answer, a defect's 500 and a rate-limit refusal (one in progress at a time)", () =>
      Effect.gen(function*() {
        const client = { headers: { "x-forwarded-for": "192.0.2.20" } }
        const statuses = []
        // 3 requests a minute: two answered, the defect, then refusals; each next one finds the slot free.
        for (const path of ["/api/things", "/api/broken", "/api/things", "/api/things", "/api/things"]) {
          const sent = answered(yield* send(path, client))
          statuses.push([sent.status, sent.headers["retry-after"]])
        }
        // A busy slot would answer 429 with `retry-after: 1`; the rate limit's refusals wait for the window.
        expect(statuses).toEqual([[200, undefined], [500, undefined], [200, undefined], [429, "60"], [429, "60"]])
      }))
  })
})

const logged: Array<Logger.Logger.Options<unknown>> = []
const capture = Logger.replace(Logger.defaultLogger, Logger.make((options) => void logged.push(options)))

describe("the edge, without access lines", () => {
  layer(edged(capture), { excludeTestServices: true })("its access line goes to the program's loggers", (it) => {
    it.effect("as Effect.log would hand it over, with the request id and the answer", () =>
      Effect.gen(function*() {
        const sent = answered(yield* send("/api/nowhere?payer=did:desk:0123456789abcdef0123456789abcdef"))
        yield* settle
        const entry = logged.find((_) => _.message === "Sent HTTP response")!
        expect(entry.logLevel.label).toBe("INFO")
        expect(Object.fromEntries(HashMap.toEntries(entry.annotations))).toEqual({
          requestId: sent.requestId,
          "http.method": "GET",
          "http.url": "/api/nowhere?payer=did:desk:0123…cdef",
          "http.status": 404
        })
      }))
  })
})

const written: Array<string> = []
const json = JsonLogger.make((text) => written.push(text))
const writtenLines = () => {
  json.flush()
  return written.join("").trimEnd().split("\n").map((line) => JSON.parse(line))
}

describe("the desk's JSON log", () => {
  layer(edged(Logger.replace(Logger.defaultLogger, json.logger)), { excludeTestServices: true })(
    "names the request of every line logged while it is worked on",
    (it) => {
      it.effect("a handler's lines and its forked fiber's carry the id its answer carries; a line outside none", () =>
        Effect.gen(function*() {
          written.length = 0
          const first = answered(yield* send("/api/logs", { headers: { "x-forwarded-for": "192.0.2.30" } }))
          const second = answered(
            yield* send("/api/logs", { headers: { "x-forwarded-for": "192.0.2.31", "x-request-id": "trace-7" } })
          )
          yield* Effect.log("between requests")
          expect(second.requestId).toBe("trace-7")
          const logged = writtenLines().filter((_) => _.message !== "Sent HTTP response")
          expect(logged.map((_) => [_.message, _.annotations.requestId])).toEqual([
            ["inside", first.requestId],
            ["forked", first.requestId],
            ["inside", "trace-7"],
            ["forked", "trace-7"],
            ["between requests", undefined]
          ])
        }))

      it.effect("an internal failure's line names the request its answer names", () =>
        Effect.gen(function*() {
          written.length = 0
          const failed = answered(yield* send("/api/failing", { headers: { "x-forwarded-for": "192.0.2.32" } }))
          const [line] = writtenLines().filter((_) => _.message[0] === "test failure")
          expect(line.logLevel).toBe("ERROR")
          expect(line.annotations.requestId).toBe(failed.requestId)
          expect(JSON.parse(failed.text).requestId).toBe(failed.requestId)
        }))
    }
  )
})
