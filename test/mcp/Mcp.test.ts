import { describe, expect, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { STANDING_ORDER } from "../../src/Guide/StandingOrder.ts"
import { TOOLS } from "../../src/Mcp/Tools.ts"
import { deskOn, PUBLIC_URL, readJson, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"
import { connectMcp } from "../support/McpClient.ts"
import { backends } from "../support/Storage.ts"

/** A tool result through the official client: one text content holding the JSON value, and no second copy of it. */
const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
  Effect.promise(async () => {
    const result = await client.callTool({ name, arguments: args })
    const content = result.content as Array<{ type: string; text: string }>
    expect(content).toHaveLength(1)
    expect(content[0]!.type).toBe("text")
    expect(result.structuredContent).toBeUndefined()
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { isError: result.isError === true, value: JSON.parse(content[0]!.text) as any }
  })

const raw = (path: string, init: RequestInit) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await fetch(`${desk.url}${path}`, init)
      return { status: response.status, headers: response.headers, json: await readJson(response) }
    }))

const get = (path: string) => raw(path, { headers: { accept: "application/json" } })

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" }

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`MCP over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 120_000 })((it) => {
      it.scoped("initialize; tools/list, /tools.json and both server-card paths publish the same tools", () =>
        Effect.gen(function*() {
          const client = yield* connectMcp()
          expect(client.getServerVersion()).toMatchObject({ name: "handoff-desk", version: "1.0.0" })
          expect(client.getServerCapabilities()?.tools).toBeDefined()
          expect(client.getInstructions()).toContain("search_handoffs")

          const { tools } = yield* Effect.promise(() => client.listTools())
          expect(tools.map((_) => _.name)).toEqual(TOOLS.map((_) => _.name))
          for (const tool of tools) {
            expect(tool.inputSchema.type).toBe("object")
            expect(tool.description?.length).toBeGreaterThan(20)
          }
          expect(tools.find((_) => _.name === "file_handoff")?.inputSchema.required).toEqual(
            ["title", "teaser", "body", "filer", "filerDid", "priceUsd", "reconstructUsd"]
          )

          const listed = tools.map(({ description, inputSchema, name }) => ({ name, description, inputSchema }))
          const document = yield* get("/tools.json")
          expect(document.status).toBe(200)
          expect(document.json.mcp.url).toBe("http://desk.test/mcp")
          // The spec's standing order, as every discovery document carries it (do not pay twice, demo, seed...).
          expect(document.json.standingOrder).toEqual(STANDING_ORDER)
          for (const words of ["include: \"demo\"", "origin seed", "Do not pay twice"]) {
            expect(client.getInstructions()).toContain(words)
          }
          expect(
            document.json.tools.map(({ description, inputSchema, name }: typeof listed[number]) => ({
              name,
              description,
              inputSchema
            }))
          )
            .toEqual(listed)

          const card = yield* get("/.well-known/mcp/server-card.json")
          expect(card.status).toBe(200)
          expect(card.headers.get("content-type")).toContain("application/json")
          expect(card.json).toMatchObject({
            name: "handoff-desk",
            version: "1.0.0",
            serverInfo: { name: "handoff-desk", version: "1.0.0" },
            transport: { type: "streamable-http", endpoint: "/mcp" },
            remotes: [{ type: "streamable-http", url: "http://desk.test/mcp" }]
          })
          expect(card.json.tools).toEqual(document.json.tools)
          expect((yield* get("/.well-known/mcp/server-card")).json).toEqual(card.json)
        }))

      it.scoped("the whole loop over MCP: file, search, unlock, fetch body, receipts, with REST seeing the same ledger", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const buyer = newAgentId()
          const asFiler = yield* connectMcp({ "X-AGENT-ID": filer })
          const anonymous = yield* connectMcp()

          const filed = yield* call(
            asFiler,
            "file_handoff",
            filing(filer, { title: "Quokka cache stampede: the lock that held", body: BODY })
          )
          expect(filed.isError).toBe(false)
          expect(filed.value).toMatchObject({
            title: "Quokka cache stampede: the lock that held",
            filerDid: filer,
            origin: "filed"
          })
          const id: string = filed.value.id
          expect(id).toMatch(/^DESK-\d+$/)

          const found = yield* call(anonymous, "search_handoffs", { q: "quokka stampede", limit: 5 })
          expect(found.value).toMatchObject({ page: 1, limit: 5 })
          expect(found.value.items.map((_: { id: string }) => _.id)).toContain(id)
          // REST's answer member for member (the spec's name, site, query echo, next...), but for its next steps.
          const rest = yield* get("/api/discover?q=quokka+stampede&limit=5")
          const { nextActions: restActions, ...restAnswer } = rest.json
          const { nextActions: mcpActions, ...mcpAnswer } = found.value
          expect(mcpAnswer).toEqual(restAnswer)
          expect(Object.keys(mcpActions)).toEqual(Object.keys(restActions))
          expect(mcpActions.buy).toContain("unlock_handoff")
          // An empty argument is one not sent, as an empty query parameter is over REST (an outside check was refused
          // `q: must not be empty` for the `q: ""` that REST takes as no text).
          const blank = yield* call(anonymous, "search_handoffs", { q: "", tag: "", vendor: "", limit: 5 })
          expect(blank.isError).toBe(false)
          const { nextActions: _, ...blankAnswer } = blank.value
          const { nextActions: __, ...restBlank } = (yield* get("/api/discover?q=&tag=&vendor=&limit=5")).json
          expect(blankAnswer).toEqual(restBlank)

          const preview = yield* call(anonymous, "preview_handoff", { id })
          expect(preview.value).toMatchObject({ id, priceUsd: 0.5, purchases: 0 })
          expect(preview.value.body).toBeUndefined()

          const sealed = yield* call(anonymous, "fetch_body", { id, agentId: buyer })
          expect(sealed).toMatchObject({
            isError: true,
            value: { ok: false, error: "payment_required", x402Version: 1 }
          })

          const unlocked = yield* call(anonymous, "unlock_handoff", { id, agentId: buyer })
          expect(unlocked.value).toMatchObject({
            ok: true,
            alreadyUnlocked: false,
            receipt: {
              handoffId: id,
              payer: buyer,
              priceUsd: 0.5,
              filerPayoutUsd: 0.45,
              deskFeeUsd: 0.05,
              mode: "desk"
            }
          })
          const again = yield* call(anonymous, "unlock_handoff", { id, agentId: buyer })
          expect(again.value.alreadyUnlocked).toBe(true)
          expect(again.value.receipt.receiptId).toBe(unlocked.value.receipt.receiptId)

          const body = yield* call(anonymous, "fetch_body", { id, agentId: buyer })
          expect(body.value).toEqual({
            ok: true,
            id,
            title: "Quokka cache stampede: the lock that held",
            hash: createHash("sha256").update(BODY).digest("hex"),
            body: BODY
          })
          const viaRest = yield* raw(`/api/handoffs/${id}/body`, {
            headers: { accept: "application/json", "x-agent-id": buyer }
          })
          expect(viaRest.json.body).toBe(BODY)

          const receipts = yield* call(anonymous, "list_receipts", { payer: buyer })
          expect(receipts.value).toMatchObject({ ok: true, total: 1 })
          expect(receipts.value.receipts[0]).toMatchObject({ handoffId: id, payer: buyer })
          expect((yield* call(anonymous, "preview_handoff", { id })).value.purchases).toBe(1)

          expect((yield* call(anonymous, "desk_status")).value).toMatchObject({
            ok: true,
            network: "base",
            asset: "USDC"
          })
          expect((yield* call(anonymous, "free_example")).value).toMatchObject({
            id: "EXAMPLE",
            free: true,
            priceUsd: 0
          })
        }))

      it.scoped("failures are isError results carrying the REST error codes", () =>
        Effect.gen(function*() {
          const filer = newAgentId()
          const client = yield* connectMcp()

          expect(yield* call(client, "preview_handoff", { id: "DESK-999999" })).toMatchObject({
            isError: true,
            value: { ok: false, error: "not_found" }
          })
          expect(yield* call(client, "unlock_handoff", { id: "DESK-1" })).toMatchObject({
            isError: true,
            value: { ok: false, error: "agent_id_required" }
          })
          expect((yield* call(client, "unlock_handoff", { id: "DESK-1", agentId: "did:desk:nope" })).value.error)
            .toBe("invalid_agent_id")
          // The identity is judged before the other arguments, as REST judges X-AGENT-ID before the body.
          expect(
            (yield* call(client, "unlock_handoff", { id: "DESK-1", agentId: "did:desk:nope", extra: 1 })).value.error
          )
            .toBe("invalid_agent_id")
          expect((yield* call(client, "file_handoff", { agentId: "did:desk:BAD", title: 1 })).value.error)
            .toBe("invalid_agent_id")
          expect((yield* call(client, "file_handoff", { title: 1 })).value.error).toBe("agent_id_required")
          // A blank identity names none on a read, as a blank X-AGENT-ID: the body answers payment_required.
          expect((yield* call(client, "fetch_body", { id: "DESK-1", agentId: "" })).value.error).toBe(
            "payment_required"
          )
          // An agentId that is not text is the input's error, on every tool alike.
          for (const [tool, code] of [["fetch_body", "invalid_request"], ["unlock_handoff", "invalid_request"]]) {
            expect((yield* call(client, tool!, { id: "DESK-1", agentId: 7 })).value.error).toBe(code)
          }
          expect((yield* call(client, "file_handoff", { agentId: ["x"] })).value.error).toBe("invalid_handoff")
          // A blank payment is none, as a blank X-PAYMENT is: this desk writes a desk receipt.
          const payer = newAgentId()
          const blankPayment = yield* call(client, "unlock_handoff", { id: "DESK-1", agentId: payer, payment: " " })
          expect(blankPayment.value).toMatchObject({ ok: true, alreadyUnlocked: false })

          const invalid = yield* call(client, "file_handoff", {
            ...filing(filer, { body: "too short" }),
            agentId: filer,
            id: "DESK-1"
          })
          expect(invalid.value).toMatchObject({ ok: false, error: "invalid_handoff" })
          // The length and both missing sections, in one answer.
          expect(invalid.value.issues.map((_: { path: string }) => _.path).sort()).toEqual([
            "body",
            "body",
            "body",
            "id"
          ])

          // Two hundred wrong items get the first 20 issues back, as over REST, not one each.
          const many = yield* call(client, "file_handoff", {
            ...filing(filer),
            agentId: filer,
            tags: Array.from({ length: 100 }, () => ""),
            contains: Array.from({ length: 100 }, () => 7)
          })
          expect(many.value).toMatchObject({ ok: false, error: "invalid_handoff" })
          expect(many.value.issues).toHaveLength(20)
          expect(many.value.message).toMatch(/; and \d+ more$/)
          expect(JSON.stringify(many.value).length).toBeLessThan(8_000)

          const query = yield* call(client, "search_handoffs", { limit: 0, sort: "cheapest" })
          expect(query.value.error).toBe("invalid_query")
          expect(new Set(query.value.issues.map((_: { path: string }) => _.path))).toEqual(new Set(["limit", "sort"]))

          // One decoder per input: the REST route's rules, the result window and its date range included.
          const future = yield* call(client, "search_handoffs", { since: "+020000-01-01T00:00:00Z" })
          expect(future.value).toMatchObject({ ok: false, error: "invalid_query", issues: [{ path: "since" }] })
          for (
            const [tool, args] of [
              ["search_handoffs", { page: 101, limit: 100 }],
              ["search_handoffs", { sort: "price", page: 1e9, limit: 100 }],
              ["list_receipts", { page: 501 }]
            ] as const
          ) {
            const deep = yield* call(client, tool, args)
            expect(deep.value, tool).toMatchObject({ ok: false, error: "invalid_query", issues: [{ path: "page" }] })
            expect(deep.value.message).toContain("narrow the query")
          }
          expect((yield* call(client, "search_handoffs", { page: 100, limit: 100 })).value).toMatchObject({
            page: 100,
            next: null,
            items: []
          })
          expect((yield* call(client, "search_handoffs", { q: "x", sneaky: 1 })).value.issues).toEqual([
            {
              path: "sneaky",
              message: "unknown field \"sneaky\"; see the input schema of search_handoffs in tools/list"
            }
          ])
          // The tools without arguments refuse one as the others do (Schema.Struct({}) alone took any object).
          for (const tool of ["desk_status", "free_example"]) {
            const sent = yield* call(client, tool, { bogus: 1 })
            expect(sent.isError, tool).toBe(true)
            expect(sent.value, tool).toMatchObject({
              ok: false,
              error: "invalid_query",
              issues: [{ path: "bogus", message: `unknown field "bogus"; ${tool} takes no arguments` }]
            })
          }

          const expensive = yield* call(client, "file_handoff", {
            ...filing(filer, { priceUsd: 11, reconstructUsd: 900 }),
            agentId: filer
          })
          const overCap = yield* call(client, "unlock_handoff", { id: expensive.value.id, agentId: newAgentId() })
          expect(overCap.value).toMatchObject({ ok: false, error: "spend_cap_exceeded", spendCapUsd: 10, priceUsd: 11 })

          const unknown = yield* Effect.promise(() =>
            client.callTool({ name: "no_such_tool" }).then(() => null, (error) => error)
          )
          expect(unknown).toMatchObject({ code: -32602 })
          // The client puts "MCP error -32602: " before the server's message: the server's does not say it again.
          expect(unknown.message).toBe("MCP error -32602: Unknown tool no_such_tool; see tools/list.")
        }))

      it.effect("malformed params are -32602 Invalid params with the request's id; tools still judge their arguments", () =>
        Effect.gen(function*() {
          const post = (message: object) =>
            raw("/mcp", { method: "POST", headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: "2.0", ...message }) })
          for (
            const [id, params, path] of [
              [1, { arguments: {} }, "params.name"],
              ["two", { name: 5 }, "params.name"],
              [3, { name: "desk_status", arguments: [] }, "params.arguments"],
              [4, { name: "desk_status", arguments: "{}" }, "params.arguments"],
              [5, undefined, "params"]
            ] as const
          ) {
            const refused = yield* post({ id, method: "tools/call", ...(params === undefined ? {} : { params }) })
            expect(refused.status, JSON.stringify(params)).toBe(200)
            expect(refused.json).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32602 } })
            expect(refused.json.error.message).toMatch(new RegExp(`^Invalid params: ${path.replace(".", "\\.")}: `))
          }
          // The other requests the server answers, judged the same way.
          for (
            const [method, params] of [
              ["tools/list", { cursor: 5 }],
              ["initialize", { protocolVersion: "2025-06-18" }]
            ] as const
          ) {
            const refused = yield* post({ id: 6, method, params })
            expect(refused.status, method).toBe(200)
            expect(refused.json).toMatchObject({ jsonrpc: "2.0", id: 6, error: { code: -32602 } })
            expect(refused.json.error.message).toContain("Invalid params: params.")
          }

          // Unchanged: an unknown tool is -32602 from the server, arguments outside a tool's schema an isError result.
          const unknown = yield* post({ id: 7, method: "tools/call", params: { name: "no_such_tool", arguments: {} } })
          expect(unknown.status).toBe(200)
          expect(unknown.json).toMatchObject({ jsonrpc: "2.0", id: 7, error: { code: -32602 } })
          expect(unknown.json.error.message).toContain("Unknown tool no_such_tool")
          const badArguments = yield* post({
            id: 8,
            method: "tools/call",
            params: { name: "search_handoffs", arguments: { limit: "many" } }
          })
          expect(badArguments.status).toBe(200)
          expect(badArguments.json).toMatchObject({ jsonrpc: "2.0", id: 8, result: { isError: true } })
          expect(JSON.parse(badArguments.json.result.content[0].text)).toMatchObject({ error: "invalid_query" })
          const called = yield* post({ id: 9, method: "tools/call", params: { name: "desk_status" } })
          expect(called.json).toMatchObject({ jsonrpc: "2.0", id: 9, result: { isError: false } })
          expect(JSON.parse(called.json.result.content[0].text)).toMatchObject({ ok: true })
        }))

      it.effect("the endpoint answers JSON for every protocol error and sits behind the desk's middleware", () =>
        Effect.gen(function*() {
          const ping = yield* raw("/mcp", {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
          })
          expect(ping.status).toBe(200)
          expect(ping.json).toEqual({ jsonrpc: "2.0", id: 1, result: {} })
          expect(ping.headers.get("content-type")).toContain("application/json")
          const remaining = (headers: Headers) => Number(/;r=(\d+);/.exec(headers.get("ratelimit") ?? "")?.[1])
          const again = yield* raw("/mcp", {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
          })
          expect(remaining(again.headers)).toBe(remaining(ping.headers) - 1)
          expect(ping.headers.get("x-request-id")).not.toBeNull()

          for (const method of ["GET", "DELETE"]) {
            const refused = yield* raw("/mcp", { method, headers: { accept: "application/json, text/event-stream" } })
            expect(refused.status).toBe(405)
            expect(refused.headers.get("allow")).toBe("POST")
            expect(refused.json).toMatchObject({ ok: false, error: "method_not_allowed" })
          }

          // A body that is no JSON is JSON-RPC's Parse error, as the SDK answers it (not the REST invalid_json).
          for (
            const [body, words] of [
              ["{\"jsonrpc\":", "not valid JSON"],
              [Buffer.from([0x7b, 0xff, 0x7d]), "not valid UTF-8"],
              ["[".repeat(40) + "]".repeat(40), "nest"]
            ] as const
          ) {
            const malformed = yield* raw("/mcp", { method: "POST", headers: MCP_HEADERS, body })
            expect(malformed.status).toBe(400)
            expect(malformed.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
            expect(malformed.json.error.message).toMatch(new RegExp(`^Parse error: .*${words}`))
          }

          // Valid JSON that is no JSON-RPC message is JSON-RPC 2.0's Invalid Request, not a Parse error.
          for (
            const message of [
              { hello: 1 },
              null,
              42,
              "ping",
              { jsonrpc: "1.0", id: 1, method: "ping" },
              { jsonrpc: "2.0", id: 1.5, method: "ping" },
              { jsonrpc: "2.0", id: 1, method: "ping", params: 5 },
              { jsonrpc: "2.0", id: 1, method: "ping", extra: true }
            ]
          ) {
            const notJsonRpc = yield* raw("/mcp", {
              method: "POST",
              headers: MCP_HEADERS,
              body: JSON.stringify(message)
            })
            expect(notJsonRpc.status, JSON.stringify(message)).toBe(400)
            expect(notJsonRpc.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
            expect(notJsonRpc.json.error.message).toContain("Invalid Request")
          }
          const empty = yield* raw("/mcp", { method: "POST", headers: MCP_HEADERS, body: "" })
          expect(empty.status).toBe(400)
          expect(empty.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })

          // A batch would do many requests' work for one unit of the rate limit: refused whole, nothing runs.
          const filer = newAgentId()
          const title = `Batched filing ${filer.slice(-8)}`
          const fileCall = (id: number) => ({
            jsonrpc: "2.0",
            id,
            method: "tools/call",
            params: {
              name: "file_handoff",
              arguments: { ...filing(filer, { title: `${title} ${id}` }), agentId: filer }
            }
          })
          for (
            const batch of [[fileCall(1), fileCall(2)], [fileCall(3)], [{ jsonrpc: "2.0", id: 4, method: "ping" }], []]
          ) {
            const refused = yield* raw("/mcp", { method: "POST", headers: MCP_HEADERS, body: JSON.stringify(batch) })
            expect(refused.status).toBe(400)
            expect(refused.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
            expect(refused.json.error.message).toContain("batches are not supported")
          }
          expect((yield* get(`/api/discover?q=${encodeURIComponent(`"${title}"`)}`)).json.total).toBe(0)

          // A batch over the body guard's 100 items is still a batch, refused as one (not a Parse error).
          const longBatch = Array.from({ length: 150 }, (_, id) => ({ jsonrpc: "2.0", id, method: "ping" }))
          const refusedLong = yield* raw("/mcp", {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify(longBatch)
          })
          expect(refusedLong.status).toBe(400)
          expect(refusedLong.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })

          // A tool's list over 100 items is the tool's own error, with REST's code and path, and nothing is filed.
          const longList = yield* raw("/mcp", {
            method: "POST",
            headers: MCP_HEADERS,
            body: JSON.stringify({
              ...fileCall(5),
              params: {
                name: "file_handoff",
                arguments: {
                  ...filing(filer, { title: `${title} long` }),
                  tags: Array.from({ length: 150 }, (_, i) => `t${i}`),
                  agentId: filer
                }
              }
            })
          })
          expect(longList.status).toBe(200)
          expect(longList.json.result.isError).toBe(true)
          expect(JSON.parse(longList.json.result.content[0].text)).toMatchObject({
            ok: false,
            error: "invalid_handoff",
            issues: [{ path: "tags", message: "has more than 100 items, far over its maximum" }]
          })
          expect((yield* get(`/api/discover?q=${encodeURIComponent(`"${title}"`)}`)).json.total).toBe(0)

          // A body without a Content-Type is JSON, as on REST routes.
          const untyped = yield* raw("/mcp", {
            method: "POST",
            headers: { accept: MCP_HEADERS.accept },
            // Bytes: fetch gives a string body a Content-Type of its own (text/plain).
            body: Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "ping" }))
          })
          expect(untyped.status).toBe(200)
          expect(untyped.json).toEqual({ jsonrpc: "2.0", id: 6, result: {} })

          // DNS rebinding: a page of another site (its name rebound to the desk) is refused; this machine's are not.
          for (
            const [origin, status] of [
              ["http://evil.example", 403],
              ["null", 403],
              ["http://desk.test.evil.example", 403],
              [PUBLIC_URL, 200],
              ["http://localhost:6274", 200],
              ["http://127.0.0.1:3000", 200],
              ["http://[::1]:8080", 200]
            ] as const
          ) {
            const answer = yield* raw("/mcp", {
              method: "POST",
              headers: { ...MCP_HEADERS, origin },
              body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })
            })
            expect(answer.status, origin).toBe(status)
            if (status === 403) {
              expect(answer.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000 } })
              expect(answer.json.error.message).toContain("DNS rebinding")
            }
          }

          // The answer is always JSON: a client that takes JSON is served, as the spec's clients send
          // `Accept: application/json` (an outside check was refused 406 for it); one that takes no JSON is refused.
          const pingAccepting = (accept: string | undefined) =>
            raw("/mcp", {
              method: "POST",
              headers: { "content-type": "application/json", ...(accept === undefined ? {} : { accept }) },
              body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
            })
          for (const accept of [undefined, "application/json", "*/*", "application/*;q=0.5", "text/html, */*;q=0.1"]) {
            const answer = yield* pingAccepting(accept)
            expect(answer.status, String(accept)).toBe(200)
            expect(answer.json, String(accept)).toMatchObject({ jsonrpc: "2.0", id: 1, result: {} })
          }
          for (const accept of ["text/html", "text/event-stream", "application/json;q=0"]) {
            const wrongAccept = yield* pingAccepting(accept)
            expect(wrongAccept.status, accept).toBe(406)
            expect(wrongAccept.json.error.code, accept).toBe(-32000)
          }
        }))
    })
  })
}
