import { HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { request as httpRequest } from "node:http"
import { NotFound } from "../../src/Domain/Errors.ts"
import { makeServer } from "../../src/Http/NodeServer.ts"
import { errorResponse, jsonResponse } from "../../src/Http/Respond.ts"

// Characters of two, three and four UTF-8 bytes: a length counted in characters would cut the body short.
const value = { ok: true, title: "Café — 漢字 🎉", items: [1, 2, 3], nested: { note: null } }
// A page long enough to be written in parts (src/Http/JsonParts.ts): 300 kB, multi-byte characters throughout.
const long = {
  total: 400,
  items: Array.from({ length: 400 }, (_, i) => ({ i, title: `Café — 漢字 🎉 ${i}`, text: "x".repeat(700) })),
  next: null
}

const app = HttpRouter.empty.pipe(
  HttpRouter.get("/value", Effect.succeed(jsonResponse(value))),
  HttpRouter.get("/long", Effect.sync(() => jsonResponse(long))),
  HttpRouter.get("/created", Effect.succeed(jsonResponse(value, { status: 201, headers: { "x-extra": "yes" } }))),
  HttpRouter.get("/missing", Effect.succeed(errorResponse(NotFound, new NotFound({ message: "No thing été" }))))
)

interface Answer {
  readonly status: number
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

const get = (path: string, method = "GET") =>
  HttpServer.addressWith((address) =>
    Effect.async<Answer>((resume) => {
      const port = address._tag === "TcpAddress" ? address.port : 0
      const request = httpRequest({ host: "127.0.0.1", port, path, method }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => chunks.push(chunk))
        response.on("end", () =>
          resume(Effect.succeed({
            status: response.statusCode!,
            headers: response.headers,
            body: Buffer.concat(chunks)
          })))
      })
      request.on("error", (error) => resume(Effect.die(error)))
      request.end()
    })
  )

const served = HttpServer.serve(app).pipe(
  // The desk's own server: it writes a body in parts (src/Http/JsonParts.ts).
  Layer.provideMerge(NodeHttpServer.layer(() => makeServer({ requestSeconds: 30 }), { host: "127.0.0.1", port: 0 }))
)

describe("JSON responses written as text", () => {
  layer(served)((it) => {
    it.effect("carry their exact length in bytes, not in characters, and no chunked encoding", () =>
      Effect.gen(function*() {
        const answer = yield* get("/value")
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toBe("application/json")
        expect(answer.headers["transfer-encoding"]).toBeUndefined()
        expect(Number(answer.headers["content-length"])).toBe(answer.body.length)
        expect(answer.body.length).toBeGreaterThan(JSON.stringify(value).length)
        expect(JSON.parse(answer.body.toString("utf8"))).toEqual(value)
      }))

    it.effect("keep the status and headers they are given", () =>
      Effect.gen(function*() {
        const answer = yield* get("/created")
        expect(answer.status).toBe(201)
        expect(answer.headers["x-extra"]).toBe("yes")
        expect(JSON.parse(answer.body.toString("utf8"))).toEqual(value)
      }))

    it.effect("answer an error with the status its schema declares", () =>
      Effect.gen(function*() {
        const answer = yield* get("/missing")
        expect(answer.status).toBe(404)
        expect(Number(answer.headers["content-length"])).toBe(answer.body.length)
        expect(JSON.parse(answer.body.toString("utf8"))).toMatchObject({ error: "not_found", message: "No thing été" })
      }))

    it.effect("answer HEAD with the GET's length and no body", () =>
      Effect.gen(function*() {
        const [head, full] = [yield* get("/value", "HEAD"), yield* get("/value")]
        expect(head.status).toBe(200)
        expect(head.body.length).toBe(0)
        expect(head.headers["content-length"]).toBe(full.headers["content-length"])
      }))

    it.effect("write a long list in parts with the whole text's exact length", () =>
      Effect.gen(function*() {
        const answer = yield* get("/long")
        expect(answer.status).toBe(200)
        expect(answer.headers["content-type"]).toBe("application/json")
        expect(answer.headers["transfer-encoding"]).toBeUndefined()
        expect(Number(answer.headers["content-length"])).toBe(answer.body.length)
        expect(answer.body.toString("utf8")).toBe(JSON.stringify(long))
        const head = yield* get("/long", "HEAD")
        expect(head.body.length).toBe(0)
        expect(head.headers["content-length"]).toBe(answer.headers["content-length"])
      }))
  })
})
