import { describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { SORTS } from "../../src/Domain/Discover.ts"
import { echo, issuesOf } from "../../src/Domain/Issues.ts"
import { deskOn, readJson, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"

type Issue = { readonly path: string; readonly message: string }

const request = (path: string, init: RequestInit & { json?: unknown; agent?: string } = {}) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async () => {
      const response = await desk.request(path, init)
      return { status: response.status, json: await readJson(response) }
    }))

const mcpCall = (name: string, args: Record<string, unknown>) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.acquireUseRelease(
      Effect.promise(async () => {
        const client = new Client({ name: "validation-test", version: "1.0.0" })
        await client.connect(new StreamableHTTPClientTransport(new URL(`${desk.url}/mcp`)))
        return client
      }),
      (client) =>
        Effect.promise(async () => {
          const result = await client.callTool({ name, arguments: args })

          return {
            isError: result.isError === true,
            // eslint-disable-next-line @typescript-eslint/no-explicit-any
            value: JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as any
          }
        }),
      (client) => Effect.promise(() => client.close())
    ))

const pathsOf = (issues: ReadonlyArray<Issue>) => issues.map((_) => _.path).sort()

/** Every mistake of the issue at once: 7 decimals, no required headings, reconstruct under price, a forbidden phrase. */
const everyMistake = (agent: string) =>
  filing(agent, {
    priceUsd: 1.2345678,
    reconstructUsd: 1,
    body: BODY.replace("## Failed approaches", "## Attempts").replace(
      "## Recommended next actions",
      "**Recommended next actions**"
    ),
    doesNotContain: ["password", "SIDEKIQMON"]
  })

const EVERY_MISTAKE_PATHS = ["body", "body", "doesNotContain.1", "priceUsd", "reconstructUsd"]

const noInternalWords = (issues: ReadonlyArray<Issue>, message: string) => {
  for (const text of [message, ...issues.map((_) => _.message)]) {
    expect(text).not.toMatch(/Expected|actual|UnlockRequest|FilingRequest|DiscoverParams|Invalid Date/)
  }
}

describe("issues as the desk reports them", () => {
  it("name the allowed values of a closed list once, drop optional noise and name no internal schema", () => {
    const flat = [
      ...SORTS.map((sort) => ({ _tag: "Type", path: ["sort"], message: `Expected "${sort}", actual "best"` })),
      { _tag: "Type", path: ["sort"], message: "Expected undefined, actual \"best\"" },
      { _tag: "Type", path: [], message: "Expected UnlockRequest, actual null" },
      { _tag: "Type", path: ["tags"], message: "Expected ReadonlyArray<string>, actual 3" }
    ]
    expect(issuesOf(flat)).toEqual([
      { path: "sort", message: `must be one of ${SORTS.map((_) => `"${_}"`).join(", ")}; got "best"` },
      { path: "", message: "must be a JSON object; got null" },
      { path: "tags", message: "must be a JSON array; got 3" }
    ])
  })

  it("echo what was sent, shortened", () => {
    expect(echo("yesterday")).toBe("\"yesterday\"")
    expect(echo("x".repeat(500))).toBe(`"${"x".repeat(40)}"… (500 characters)`)
    expect(echo(1.2345678)).toBe("1.2345678")
  })
})

describe("validation over REST and MCP", () => {
  it.layer(deskOn(Pglite.layer({})), { timeout: 120_000 })((it) => {
    it.effect("a filing with every mistake gets every issue in one 422, the same over MCP", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const rest = yield* request("/api/handoffs", { json: everyMistake(agent), agent })
        expect(rest.status).toBe(422)
        expect(rest.json).toMatchObject({ ok: false, error: "invalid_handoff" })
        expect(pathsOf(rest.json.issues)).toEqual(EVERY_MISTAKE_PATHS)
        const messages = rest.json.issues.map((_: Issue) => _.message)
        expect(messages).toEqual(expect.arrayContaining([
          "must have at most 6 decimals (amounts are whole micro-USDC); got 1.2345678",
          "must exceed priceUsd",
          "the body contains the phrase \"SIDEKIQMON\"",
          expect.stringContaining("\"Failed approaches\" (a Markdown heading"),
          expect.stringContaining("\"Recommended next actions\" (a Markdown heading")
        ]))
        noInternalWords(rest.json.issues, rest.json.message)

        const mcp = yield* mcpCall("file_handoff", { ...everyMistake(agent), agentId: agent })
        expect(mcp.isError).toBe(true)
        expect(mcp.value).toMatchObject({ ok: false, error: "invalid_handoff" })
        expect(mcp.value.issues).toEqual(rest.json.issues)
      }))

    it.effect("field errors and rules come together even when a field is of the wrong type", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const response = yield* request("/api/handoffs", {
          json: filing(agent, { title: 42, tags: ["ok", 7], reconstructUsd: 0.1, doesNotContain: ["sidekiq"] }),
          agent
        })
        expect(response.status).toBe(422)
        expect(pathsOf(response.json.issues)).toEqual(["doesNotContain.0", "reconstructUsd", "tags.1", "title"])
        expect(response.json.issues.find((_: Issue) => _.path === "title").message).toBe("must be a string; got 42")
      }))

    it.effect("the template's placeholders are refused by name, with a hint to replace them", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const template = yield* request("/api/template")
        const response = yield* request("/api/handoffs", {
          json: { ...template.json.example, filerDid: agent, body: BODY },
          agent
        })
        expect(response.status).toBe(422)
        expect(pathsOf(response.json.issues)).toEqual([
          "filer",
          "provenance.agentName",
          "provenance.model",
          "provenance.vendor"
        ])
        for (const issue of response.json.issues) expect(issue.message).toContain("replace it with your own value")
      }))

    it.effect("a bold line is not a section: the rule says a Markdown heading", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const bold = yield* request("/api/handoffs", {
          json: filing(agent, { body: BODY.replace("## Failed approaches", "**Failed approaches**") }),
          agent
        })
        expect(bold.status).toBe(422)
        expect(bold.json.issues).toEqual([
          { path: "body", message: expect.stringContaining("section titled \"Failed approaches\" (a Markdown heading") }
        ])
        const heading = yield* request("/api/handoffs", {
          json: filing(agent, { body: BODY.replace("## Failed approaches", "### Failed approaches (ranked)") }),
          agent
        })
        expect(heading.status).toBe(201)
      }))

    it.effect("a query names each bad parameter once, with the allowed sorts and the value sent", () =>
      Effect.gen(function*() {
        const response = yield* request("/api/discover?sort=best&since=yesterday&page=0&include=all")
        expect(response.status).toBe(422)
        expect(response.json).toMatchObject({ ok: false, error: "invalid_query" })
        expect(response.json.issues).toEqual([
          { path: "sort", message: `must be one of ${SORTS.map((_) => `"${_}"`).join(", ")}; got "best"` },
          { path: "since", message: expect.stringMatching(/^must be an ISO 8601 time .*; got "yesterday"$/) },
          { path: "page", message: "must be a whole number from 1 to 1000000000; got 0" },
          { path: "include", message: "must be \"demo\"; got \"all\"" }
        ])
        noInternalWords(response.json.issues, response.json.message)

        const mcp = yield* mcpCall("search_handoffs", { sort: "best" })
        expect(mcp.value.issues).toEqual([response.json.issues[0]])

        // A decimal with more digits than a number holds is refused, not read as the nearest number: 19 decimals of
        // maxPrice were read as 0.1 while 8 were refused for their decimals (outside recheck of issue 13).
        const long = yield* request("/api/discover?maxPrice=0.1000000000000000001&minSavings=0.10000001")
        expect(long.status).toBe(422)
        expect(long.json.issues).toEqual([
          {
            path: "maxPrice",
            message: "has more digits than a number holds: send it with at most 15 significant digits; got " +
              "\"0.1000000000000000001\""
          },
          { path: "minSavings", message: expect.stringMatching(/^must have at most 6 decimals/) }
        ])
        // The forms a URL writes a number in still read as before.
        for (const price of ["+1", ".5", "5.", "0.25", "1000000000", "0.000001"]) {
          expect((yield* request(`/api/discover?maxPrice=${encodeURIComponent(price)}`)).status, price).toBe(200)
        }
      }))

    it.effect("an unlock without a JSON object says what to send, in the desk's words", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const id = (yield* request("/api/sandbox")).json.handoffId
        for (const body of ["null", "[]", "\"me\""]) {
          const response = yield* request(`/api/handoffs/${id}/unlock`, {
            method: "POST",
            body,
            headers: { "content-type": "application/json", "x-agent-id": agent }
          })
          expect(response.status, body).toBe(422)
          expect(response.json.issues[0].message, body).toContain("{\"payer\": \"<your id>\"}")
          noInternalWords(response.json.issues, response.json.message)
        }
        const missing = yield* request(`/api/handoffs/${id}/unlock`, { json: {}, agent })
        expect(missing.json.issues).toEqual([{ path: "payer", message: "is required" }])
      }))

    it.effect("MCP failures point to MCP tools, not REST routes", () =>
      Effect.gen(function*() {
        const agent = newAgentId()
        const demo = (yield* request("/api/sandbox")).json.handoffId
        const example = (yield* request("/api/example")).json
        const failures = [
          yield* mcpCall("fetch_body", { id: demo, agentId: agent }),
          yield* mcpCall("preview_handoff", { id: "DESK-999999" }),
          yield* mcpCall("file_handoff", { ...filing(agent, { colour: "blue" }), agentId: agent }),
          yield* mcpCall("file_handoff", { ...filing(agent, { body: example.body }), agentId: agent }),
          yield* mcpCall("file_handoff", { ...filing(newAgentId()), agentId: agent })
        ]
        const texts = failures.map(({ value }) =>
          [value.message, ...(value.issues ?? []).map((_: Issue) => _.message)].join(" | ")
        )
        expect(failures.map(({ isError, value }) => [isError, value.error])).toEqual([
          [true, "payment_required"],
          [true, "not_found"],
          [true, "invalid_handoff"],
          [true, "duplicate_body"],
          [true, "invalid_handoff"]
        ])
        expect(texts[0]).toContain(`unlock_handoff {"id": "${demo}"}`)
        expect(texts[1]).toContain("search_handoffs")
        expect(texts[2]).toContain("input schema of file_handoff")
        expect(texts[3]).toContain("free_example")
        expect(texts[4]).toContain("your agentId")
        for (const text of texts) expect(text).not.toMatch(/\/api\/|X-PAYMENT|GET |POST /)
      }))
  })
})
