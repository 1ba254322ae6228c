import { HttpApiBuilder, OpenApi } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Validator } from "@seriousme/openapi-schema-validator"
import { Chunk, Effect, Layer } from "effect"
import { readFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { openApiText } from "../../scripts/openapi.ts"
import { DeskApi } from "../../src/Api.ts"
import { isRateLimited, readsBody, readsDatabase, speaksJsonRpc } from "../../src/Desk/RequestRules.ts"
import { MAX_BODY_BYTES } from "../../src/Http/BodyGuard.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { newAgentId } from "../support/Fixtures.ts"

// Test-side reading of loosely typed JSON documents.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any

const CHECKED_IN = new URL("../../openapi/openapi.json", import.meta.url)
const doc: Json = OpenApi.fromApi(DeskApi)

const operations = (): Array<{ method: string; path: string; op: Json }> =>
  Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
    Object.entries<Json>(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op }))
  )

const resolve = (ref: string): Json => ref.slice(2).split("/").reduce((node: Json, key) => node?.[key], doc)

const membersOf = (schema: Json): Array<Json> =>
  (Array.isArray(schema?.anyOf) ? schema.anyOf : [schema]).map((_: Json) => (_?.$ref ? resolve(_.$ref) : _))

/** The `error` codes an operation documents for a status. */
const codesOf = (op: Json, status: number): Array<string> =>
  membersOf(op.responses[String(status)]?.content?.["application/json"]?.schema)
    .flatMap((schema) => schema?.properties?.error?.enum ?? [])

describe("the OpenAPI document", () => {
  it("is the checked-in openapi/openapi.json (regenerate with npm run openapi)", () => {
    expect(readFileSync(CHECKED_IN, "utf8")).toBe(openApiText())
  })

  it("validates as OpenAPI 3.1 with a maintained validator", async () => {
    const result = await new Validator().validate(structuredClone(doc))
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
  })

  it("is OpenAPI 3.1.0, version 1.0.0, and every $ref resolves", () => {
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.version).toBe("1.0.0")
    const refs = new Set<string>()
    const walk = (value: Json): void => {
      if (Array.isArray(value)) value.forEach(walk)
      else if (value !== null && typeof value === "object") {
        if (typeof value.$ref === "string") refs.add(value.$ref)
        Object.values(value).forEach(walk)
      }
    }
    walk(doc)
    expect([...refs].filter((ref) => resolve(ref) === undefined)).toEqual([])
    expect(JSON.stringify(doc)).not.toContain("HttpApiDecodeError")
  })

  it("documents each error status with the envelope the desk sends", () => {
    for (const { method, path, op } of operations()) {
      const statuses = Object.keys(op.responses).map(Number)
      expect(statuses.includes(429), `${method} ${path} 429`).toBe(isRateLimited(method, path))
      // A body over the limit announced with `Expect: 100-continue` is refused on any request, before its route is read.
      expect(statuses.includes(413), `${method} ${path} 413`).toBe(true)
      expect(codesOf(op, 503).includes("unavailable"), `${method} ${path} 503`).toBe(readsDatabase(path))
      // POST /mcp answers a body that is no JSON with JSON-RPC's Parse error instead.
      // DELETE /mcp (a 405 beside the API) reads no body: the 405 answers before its JSON could be judged.
      if (readsBody(method) && !("405" in op.responses)) {
        expect(codesOf(op, 400).includes("invalid_json"), `${method} ${path}`).toBe(!speaksJsonRpc(method, path))
      }
      if (op.parameters.some((_: Json) => _.in === "query") && path.startsWith("/api/")) {
        expect(codesOf(op, 422), `${method} ${path}`).toContain("invalid_query")
      }
      for (const status of statuses.filter((_) => _ >= 400)) {
        const json = op.responses[String(status)].content?.["application/json"]
        expect(json, `${method} ${path} ${status}`).toBeDefined()
        for (const schema of membersOf(json.schema)) {
          if (schema.properties?.jsonrpc !== undefined) continue
          expect(schema.required, `${method} ${path} ${status}`).toEqual(
            expect.arrayContaining(["ok", "error", "message"])
          )
          expect(schema.properties.ok.enum).toEqual([false])
        }
      }
    }
    expect(codesOf(doc.paths["/api/handoffs"].post, 422)).toEqual(["invalid_handoff"])
    expect(codesOf(doc.paths["/api/handoffs/{id}/unlock"].post, 422)).toContain("invalid_request")
  })

  it("declares the response headers no schema carries, on exactly the responses that carry them", () => {
    const headers = Object.fromEntries(
      operations().flatMap(({ method, path, op }) =>
        Object.entries<Json>(op.responses).map(([status, response]) => [
          `${method} ${path} ${status}`,
          Object.keys(response.headers ?? {})
        ])
      )
    )
    for (const { method, path, op } of operations()) {
      if (isRateLimited(method, path)) {
        expect(headers[`${method} ${path} 429`]).toEqual(["Retry-After", "RateLimit", "RateLimit-Policy"])
      }
      if (readsDatabase(path)) expect(headers[`${method} ${path} 503`]).toEqual(["Retry-After"])
      expect(headers[`${method} ${path} 500`], `${method} ${path}`).toEqual(
        op.responses["500"].content["application/json"].schema.$ref === undefined ? [] : ["X-Request-Id"]
      )
    }
    // x402 (src/Http/PaymentHeaders.ts): the v2 challenge on every 402, the settlement on a paid unlock's 200 and
    // a paid body read's (it pays and reads at once), Retry-After while a settlement is pending; nowhere else.
    const x402 = Object.entries(headers).filter(([, names]) => names.some((name) => /PAYMENT/.test(name)))
    expect(Object.fromEntries(x402)).toEqual({
      "POST /api/handoffs/{id}/unlock 200": ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"],
      "GET /api/handoffs/{id}/body 200": ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"],
      "POST /api/handoffs/{id}/unlock 402": ["PAYMENT-REQUIRED"],
      "GET /api/handoffs/{id}/body 402": ["PAYMENT-REQUIRED"]
    })
    expect(headers["POST /api/handoffs/{id}/unlock 202"]).toEqual(["Retry-After"])
    expect(codesOf(doc.paths["/api/handoffs/{id}/unlock"].post, 503)).toEqual(["settlement_unavailable", "unavailable"])

    // Each x402 extension the desk declares is named where an agent meets it (docs/settlement.md).
    const unlock = doc.paths["/api/handoffs/{id}/unlock"].post.responses
    const challenge = unlock["402"].headers["PAYMENT-REQUIRED"].description
    for (const extension of ["bazaar", "payment-identifier", "sign-in-with-x", "offer-receipt"]) {
      expect(challenge).toContain(`\`${extension}\``)
    }
    for (const name of ["PAYMENT-RESPONSE", "X-PAYMENT-RESPONSE"]) {
      expect(unlock["200"].headers[name].description).toContain("offer-receipt")
    }
  })

  it("titles no schema with effect's name for its kind (int, unknown)", () => {
    const titles: Array<string> = []
    const walk = (value: Json, at: string): void => {
      if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${at}[${i}]`))
      else if (value !== null && typeof value === "object") {
        for (const [key, member] of Object.entries<Json>(value)) {
          if (key === "title" && typeof member === "string") titles.push(`${at}: ${member}`)
          else walk(member, `${at}/${key}`)
        }
      }
    }
    walk(doc, "")
    expect(titles).toEqual(["/info: Handoff Desk"])
  })

  it("names the X-AGENT-ID and X-PAYMENT headers, required where their absence is a 401", () => {
    const headers = (op: Json) => op.parameters.filter((_: Json) => _.in === "header")
    const unlock = doc.paths["/api/handoffs/{id}/unlock"].post
    expect(headers(unlock).map((_: Json) => [_.name, _.required])).toEqual([
      ["X-AGENT-ID", true],
      ["X-PAYMENT", false],
      ["PAYMENT-SIGNATURE", false]
    ])
    expect(headers(doc.paths["/api/handoffs/{id}/body"].get).map((_: Json) => [_.name, _.required])).toEqual([
      ["X-AGENT-ID", false],
      ["X-PAYMENT", false],
      ["PAYMENT-SIGNATURE", false],
      ["SIGN-IN-WITH-X", false]
    ])
    // A payment without an identity to buy for is the 401 agent_id_required (pay and read at once).
    expect(codesOf(doc.paths["/api/handoffs/{id}/body"].get, 401).sort()).toEqual(["agent_id_required", "siwx_refused"])
    const register = doc.paths["/api/agents"].post
    expect(headers(register).map((_: Json) => [_.name, _.required])).toEqual([["X-AGENT-ID", true]])
    expect(codesOf(register, 401)).toEqual(["agent_id_required"])
    expect(codesOf(register, 400)).toContain("invalid_agent_id")
    expect(codesOf(register, 403).sort()).toEqual(["agent_mismatch", "payout_change_requires_signature"])
    // Where an identity is required it is also the apiKey security scheme, so generated clients send it.
    expect(doc.components.securitySchemes.agentId).toMatchObject({ type: "apiKey", in: "header", name: "X-AGENT-ID" })
    for (const operation of [register, unlock, doc.paths["/api/handoffs"].post]) {
      expect(operation.security).toEqual([{ agentId: [] }])
    }
    // Where it is optional (a body read, MCP), the scheme is stated as optional: none, or the id.
    expect(doc.paths["/api/handoffs/{id}/body"].get.security).toEqual([{}, { agentId: [] }])
    expect(doc.paths["/mcp"].post.security).toEqual([{}, { agentId: [] }])
  })
})

describe("the OpenAPI document against the running desk", () => {
  // The router the desk serves from: one HttpApiBuilder.Router per layer build, shared by reference.
  const layer = Layer.mergeAll(deskOn(Pglite.layer({})), HttpApiBuilder.Router.Live)

  it.layer(layer, { timeout: 120_000 })((it) => {
    it.effect("is served at /openapi.json", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        const served = yield* Effect.promise(() => desk.request("/openapi.json").then(readJson))
        expect(served).toEqual(JSON.parse(readFileSync(CHECKED_IN, "utf8")))
      }))

    it.effect("matches the running routes, both ways", () =>
      Effect.gen(function*() {
        const router = yield* HttpApiBuilder.Router.router
        expect(Chunk.toReadonlyArray(router.mounts)).toEqual([])
        const running = Chunk.toReadonlyArray(router.routes)
          .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`)
          .sort()
        const documented = operations().map(({ method, path }) => `${method} ${path}`).sort()
        expect(running).toEqual(documented)
      }))

    it.effect("documents every status and error code the desk answers", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        const agent = newAgentId()
        const observed: Array<{ what: string; op: Json; status: number; type: string; json: Json }> = []
        const probe = (what: string, op: Json, path: string, init: RequestInit) =>
          Effect.promise(async () => {
            const response = await fetch(`${desk.url}${path}`, init)
            const text = await response.text()
            const type = response.headers.get("content-type") ?? ""
            observed.push({
              what,
              op,
              status: response.status,
              type,
              json: type.startsWith("application/json") ? JSON.parse(text) : null
            })
          })
        for (const { method, path, op } of operations()) {
          const url = path.replace("{id}", "DESK-999999999")
          const headers = { accept: "application/json", "x-agent-id": agent }
          if (!readsBody(method)) {
            yield* probe(`${method} ${path}`, op, url, { method, headers })
            yield* probe(`${method} ${path} (html)`, op, url, { method, headers: { accept: "text/html" } })
            if (op.parameters.some((_: Json) => _.name === "page")) {
              yield* probe(`${method} ${path}?page=0`, op, `${url}?page=0`, { method, headers })
            }
            continue
          }
          const json = { ...headers, "content-type": "application/json" }
          yield* probe(`${method} ${path} {}`, op, url, { method, headers: json, body: "{}" })
          yield* probe(`${method} ${path} bad JSON`, op, url, { method, headers: json, body: "{" })
          yield* probe(`${method} ${path} text`, op, url, {
            method,
            headers: { ...headers, "content-type": "text/plain" },
            body: "hi"
          })
          yield* probe(`${method} ${path} too large`, op, url, {
            method,
            headers: json,
            body: "x".repeat(MAX_BODY_BYTES + 1)
          })
        }
        // A body over the limit announced with `Expect: 100-continue` (as curl sends a large one) is refused unsent on any
        // request, a GET's too (fetch sends no GET body): an outside check met the 413 where the document had none.
        for (const [method, path] of [["GET", "/api/status"], ["GET", "/mcp"], ["DELETE", "/mcp"]] as const) {
          const answer = yield* Effect.promise(() =>
            new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
              const request = httpRequest(`${desk.url}${path}`, {
                method,
                headers: {
                  "content-type": "application/json",
                  "content-length": MAX_BODY_BYTES + 1,
                  expect: "100-continue"
                }
              }, (response) => {
                let text = ""
                response.setEncoding("utf8")
                response.on("data", (chunk: string) => (text += chunk))
                response.on("end", () =>
                  resolve({ status: response.statusCode!, type: response.headers["content-type"] ?? "", text }))
              })
              request.on("error", reject)
              // Nothing of the body is sent: the answer comes to the announcement.
              request.flushHeaders()
            })
          )
          expect(answer.status, `${method} ${path} too large`).toBe(413)
          observed.push({
            what: `${method} ${path} too large`,
            op: doc.paths[path][method.toLowerCase()],
            status: answer.status,
            type: answer.type,
            json: JSON.parse(answer.text)
          })
        }
        // GET and DELETE on /mcp read no body: the 405 answers before its JSON or its type could be judged.
        for (const method of ["get", "delete"]) {
          expect(Object.keys(doc.paths["/mcp"][method].responses), method).not.toContain("415")
          expect(JSON.stringify(doc.paths["/mcp"][method].responses["400"]), method).not.toContain("InvalidJson")
        }
        // The MCP transport answers by the JSON-RPC message, so it gets messages of each kind.
        const mcp = doc.paths["/mcp"].post
        const rpc = { accept: "application/json, text/event-stream", "content-type": "application/json" }
        for (
          const [what, message] of [
            ["notification", { jsonrpc: "2.0", method: "notifications/initialized" }],
            ["request", { jsonrpc: "2.0", id: 1, method: "tools/list" }],
            ["not JSON-RPC", { hello: "desk" }]
          ] as const
        ) {
          yield* probe(`POST /mcp ${what}`, mcp, "/mcp", {
            method: "POST",
            headers: rpc,
            body: JSON.stringify(message)
          })
        }
        // The answer is always JSON: an Accept that admits no JSON is a 406.
        yield* probe("POST /mcp request, Accept: text/html only", mcp, "/mcp", {
          method: "POST",
          headers: { ...rpc, accept: "text/html" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" })
        })
        for (const { what, op, status, type, json } of observed) {
          const response = op.responses[String(status)]
          expect(response, `${what} answered ${status}`).toBeDefined()
          if (response.content !== undefined) {
            expect(Object.keys(response.content), `${what}: ${type}`).toContain(type)
          }
          if (typeof json?.error === "string") {
            expect(codesOf(op, status), what).toContain(json.error)
          }
        }
        expect([
          ...new Set(observed.map((_) =>
            _.status
          ))
        ].sort()).toEqual([
          200,
          202,
          400,
          // GET /api/receipts/:id without X-AGENT-ID (the html probe sends none).
          401,
          404,
          405,
          406,
          413,
          415,
          422
        ])
      }))
  })
})
