import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { DeskApi } from "../../src/Api.ts"
import { moneyWords } from "../../src/Desk/RailWords.ts"
import { isRateLimited } from "../../src/Desk/RequestRules.ts"
import { TEMPLATES } from "../../src/Discovery/Documents.ts"
import { routeList } from "../../src/Discovery/RouteList.ts"
import { renderJson, renderText } from "../../src/Discovery/Template.ts"
import { STANDING_ORDER } from "../../src/Guide/StandingOrder.ts"
import { MCP_PATH } from "../../src/Mcp/Api.ts"
import { TOOLS } from "../../src/Mcp/Tools.ts"
import type { Rail } from "../../src/Settlement.ts"
import { deskOn, PUBLIC_URL, readJson, TestDesk } from "../support/Desk.ts"

/** The documents rendered from static/ templates (the other discovery routes are generated JSON). */
const documents = routeList(DeskApi).filter((_) =>
  _.group === "discovery" && Object.values<string>(TEMPLATES).includes(_.path.slice(1))
)
const everyRoute = routeList(DeskApi).map(({ method, path }) => `${method} ${path}`)

describe("templates", () => {
  const values = {
    site: "https://desk.example",
    flag: true,
    routes: [{ method: "GET", path: "/a" }],
    lines: ["x", "y"]
  }

  it("fill names, repeat sections per item and keep JSON values typed", () => {
    expect(renderText("{{site}}\n{{#routes}}- {{method}} {{path}}\n{{/routes}}{{#lines}}{{.}};{{/lines}}", values, "t"))
      .toBe("https://desk.example\n- GET /a\nx;y;")
    expect(renderJson(`{"site": "{{site}}/x", "flag": "{{flag}}", "routes": "{{routes}}"}`, values, "t"))
      .toEqual({ site: "https://desk.example/x", flag: true, routes: [{ method: "GET", path: "/a" }] })
  })

  it("refuse unknown names and lists where text belongs, naming the template", () => {
    expect(() => renderText("{{sit}}", values, "llms.txt")).toThrow("llms.txt: unknown placeholder {{sit}}")
    expect(() => renderText("{{routes}}", values, "t")).toThrow("is a list")
  })
})

describe("discovery documents", () => {
  it("are never rate limited", () => {
    const paths = routeList(DeskApi).filter((_) => _.group === "discovery").map((_) => _.path)
    expect(paths).toContain("/tools.json")
    expect(paths.filter((path) => isRateLimited("GET", path))).toEqual([])
  })

  it.layer(deskOn(Pglite.layer({})), { timeout: 120_000 })((it) => {
    it.effect("each answers with its content type, the site, the standing order, every route and the MCP tools", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        expect(documents.map((_) => _.path).sort()).toEqual(
          ["/AGENTS.md", "/agents.json", "/agents.txt", "/index.json", "/llms.txt", "/starter.md"]
        )
        for (const document of documents) {
          const response = yield* Effect.promise(() => desk.request(document.path, { headers: { accept: "*/*" } }))
          expect(response.status, document.path).toBe(200)
          expect(response.headers.get("content-type"), document.path).toBe(document.contentType)
          const text = yield* Effect.promise(() => response.text())
          expect(text, document.path).not.toContain("{{")
          expect(text, document.path).toContain(PUBLIC_URL)
          // JSON documents list routes as {method, path} objects; text documents as "METHOD path".
          const json = document.contentType === "application/json" ? JSON.parse(text) : undefined
          const listed = json === undefined
            ? text
            : json.routes.map((_: { method: string; path: string }) => `${_.method} ${_.path}`).join("\n")
          for (const route of everyRoute) expect(listed, `${document.path} lists ${route}`).toContain(route)
          for (const line of STANDING_ORDER) expect(text, document.path).toContain(JSON.stringify(line).slice(1, -1))
          for (const tool of TOOLS) expect(text, `${document.path} names ${tool.name}`).toContain(tool.name)
          if (document.path !== "/starter.md") expect(text).toContain(`${PUBLIC_URL}${MCP_PATH}`)
        }
      }))

    it.effect("never tell an agent to call a route that needs X-AGENT-ID without naming it", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        // The body takes the header (it also answers a wallet's x402 sign-in, or a payment with no identity), and an
        // agent reads what it unlocked with it; /mcp takes it too, but its tools take the identity as an argument.
        const needing = routeList(DeskApi).filter((_) =>
          _.agentHeader === "required" || _.path === "/api/handoffs/:id/body"
        )
        expect(needing.map((_) => `${_.agentHeader} ${_.method} ${_.path}`)).toEqual(expect.arrayContaining([
          "required POST /api/handoffs",
          "required POST /api/handoffs/:id/unlock",
          "required POST /api/handoffs/:id/feedback",
          "optional GET /api/handoffs/:id/body"
        ]))
        // A route is named as "METHOD /path" followed by anything but more path; MCP tool lines ("like `POST ...`")
        // describe a tool, which takes the identity as its agentId argument.
        const names = (line: string, route: string) =>
          new RegExp(`${route.replace(/[/:]/g, "\\$&")}(?![\\w/:])`).test(line) && !line.includes("(like `")
        for (const path of ["/llms.txt", "/AGENTS.md", "/agents.txt", "/starter.md"]) {
          const text = yield* Effect.promise(() =>
            desk.request(path, { headers: { accept: "*/*" } }).then((_) => _.text())
          )
          for (const line of text.split("\n")) {
            for (const { method, path: route } of needing) {
              if (names(line, `${method} ${route}`)) expect(line, `${path}: ${line}`).toContain("X-AGENT-ID")
            }
          }
        }
        const agents = yield* Effect.promise(() => desk.request("/agents.json").then(readJson))
        expect(agents.routes).toContainEqual({
          method: "POST",
          path: "/api/handoffs/:id/feedback",
          summary: expect.any(String),
          agentHeader: "required"
        })
        expect(agents.routes).toContainEqual(expect.objectContaining({ path: "/api/discover", agentHeader: "none" }))
      }))

    it.effect("the JSON documents point at the sandbox, the OpenAPI document and every other document", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        const index = yield* Effect.promise(() => desk.request("/index.json").then(readJson))
        expect(index).toMatchObject({ sandbox: `${PUBLIC_URL}/api/sandbox`, openapi: `${PUBLIC_URL}/openapi.json` })
        expect(index.documents.map((_: { url: string }) => _.url)).toEqual(
          [
            ...documents.map((_) => _.path),
            "/openapi.json",
            "/tools.json",
            "/.well-known/mcp/server-card.json",
            "/.well-known/mcp/server-card"
          ]
            .map((path) => `${PUBLIC_URL}${path}`)
        )
        const agents = yield* Effect.promise(() => desk.request("/agents.json").then(readJson))
        expect(agents.identity.header).toBe("X-AGENT-ID")
        expect(agents.payment).toMatchObject({ header: "X-PAYMENT", asset: "USDC", network: "base", x402Ready: false })
        expect(agents.spendControl.defaultCapUsd).toBe(10)
        // POST /mcp answers JSON to `Accept: application/json` (with text/event-stream beside it or not): the documents
        // that name it say what to send, and none says application/json alone is refused (it was, until an outside
        // check followed the spec's `Accept: application/json`).
        expect(agents.mcp.accept).toBe("application/json, text/event-stream")
        for (const path of ["/llms.txt", "/AGENTS.md", "/agents.txt"]) {
          const text = yield* Effect.promise(() =>
            desk.request(path, { headers: { accept: "*/*" } }).then((_) => _.text())
          )
          expect(text, path).toMatch(/application\/json/)
          expect(text, path).not.toMatch(/alone (is refused|with 406)/)
        }
        const mcp = yield* Effect.promise(() =>
          desk.request("/mcp", {
            method: "POST",
            headers: { "content-type": "application/json", accept: agents.mcp.accept },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
          })
        )
        expect(mcp.status).toBe(200)
      }))
  })
})

describe("the words of a ledger-only desk", () => {
  const rail = (x402Ready: boolean): Rail => ({
    stage: "mainnet",
    network: "base",
    label: "",
    asset: "USDC",
    assetAddress: null,
    eip712: null,
    payTo: null,
    x402Ready,
    facilitatorKind: x402Ready ? "local" : "none",
    payoutEnabled: x402Ready,
    explorerTxUrl: () => null,
    note: ""
  })

  it("name the chain only when one is configured", () => {
    expect(moneyWords(rail(true))).toBe("USDC on base (stage mainnet)")
    expect(moneyWords(rail(false))).toContain("ledger receipts, no USDC")
    expect(moneyWords(rail(false))).not.toMatch(/USDC on|mainnet/)
  })

  it.layer(deskOn(Pglite.layer({})), { timeout: 120_000 })((it) => {
    it.effect("documents, sandbox and status say ledger receipts, no USDC, and never USDC on base, stage mainnet", () =>
      Effect.gen(function*() {
        const desk = yield* TestDesk
        const text = (path: string) =>
          Effect.promise(() => desk.request(path, { headers: { accept: "*/*" } }).then((_) => _.text()))
        for (const path of ["/llms.txt", "/AGENTS.md", "/starter.md", "/agents.txt", "/agents.json"]) {
          const document = yield* text(path)
          expect(document, path).toContain("ledger receipts, no USDC")
          expect(document, path).not.toMatch(/USDC on base|stage mainnet|x402, USDC/)
        }
        const sandbox = JSON.parse(yield* text("/api/sandbox"))
        expect(sandbox.note).toContain("ledger receipts, no USDC")
        const status = JSON.parse(yield* text("/api/status"))
        expect(status).toMatchObject({ x402Ready: false, label: expect.stringContaining("ledger receipts, no USDC") })
        expect(status.note).toMatch(/^Ledger receipts, no USDC/)
        expect(status.payout.note).toContain("never paid on-chain")
      }))
  })
})
