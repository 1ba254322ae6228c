import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import type { DeskSettings } from "../Config.ts"
import { moneyWords, paymentHeaderWords } from "../Desk/RailWords.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { MCP_PATH } from "../Mcp/Api.ts"
import { TOOLS } from "../Mcp/Tools.ts"
import { rateLimitWords, type RatePolicy } from "../RateLimiter.ts"
import type { Rail } from "../Settlement.ts"
import { routeList } from "./RouteList.ts"
import { renderJson, renderText, type TemplateValue } from "./Template.ts"

export const TEMPLATES = {
  llms: "llms.txt",
  agentsMd: "AGENTS.md",
  agentsTxt: "agents.txt",
  agentsJson: "agents.json",
  index: "index.json",
  starter: "starter.md"
} as const

export interface Rendered {
  readonly llms: string
  readonly agentsMd: string
  readonly agentsTxt: string
  readonly agentsJson: Record<string, unknown>
  readonly index: Record<string, unknown>
  readonly starter: string
}

const settlementText = (rail: Rail, paymentRequired: boolean) => {
  const xPayment = rail.x402Ready
    ? `X-PAYMENT (x402, exact scheme) settles ${rail.asset} on ${rail.network} to the desk wallet, on the unlock ` +
      "or on GET /api/handoffs/:id/body with X-AGENT-ID (pays and reads at once, as x402 clients retry)."
    : "X-PAYMENT is not accepted on this desk (no chain configured)."
  const receipt = paymentRequired
    ? "An unlock without X-PAYMENT answers 402 with the x402 challenge (the sandbox's demo packet stays free)."
    : "An unlock without X-PAYMENT writes a desk receipt (a ledger record); no USDC moves."
  return `${receipt} ${xPayment}`
}

const HEADER_WORDS = {
  required: " (X-AGENT-ID required)",
  optional: " (X-AGENT-ID when you act as your identity)",
  none: ""
} as const

/** Everything a template may name; the routes and tools come from their one definition each. */
export const templateValues = (config: DeskSettings, rail: Rail, policy: RatePolicy): Record<string, TemplateValue> => {
  const routes = routeList(DeskApi)
  return {
    name: "Handoff Desk",
    site: config.publicUrl,
    stage: rail.stage,
    network: rail.network,
    asset: rail.asset,
    label: rail.label,
    money: moneyWords(rail),
    paymentHeader: paymentHeaderWords(rail),
    x402Ready: rail.x402Ready,
    paymentRequired: config.paymentRequired,
    settlement: settlementText(rail, config.paymentRequired),
    rateLimit: `${rateLimitWords(policy)}; discovery documents and GET /api/health are not limited`,
    standingOrder: STANDING_ORDER,
    routes: routes.map(({ agentHeader, method, path, summary }) => ({ method, path, summary, agentHeader })),
    // The text documents' route lines name the identity header where a route needs or takes it.
    routeLines: routes.map(({ agentHeader, method, path, summary }) => ({
      method,
      path,
      summary,
      header: HEADER_WORDS[agentHeader]
    })),
    documents: routes
      .filter((_) => _.group === "discovery" && _.method === "GET")
      .map(({ contentType, path, summary }) => ({
        path,
        url: `${config.publicUrl}${path}`,
        type: contentType,
        summary
      })),
    mcpPath: MCP_PATH,
    mcpTools: TOOLS.map((tool) => ({ name: tool.name, title: tool.title, rest: tool.rest }))
  }
}

/** Reads the templates in `static/` once, at startup; a missing file or an unknown placeholder stops the desk. */
export const renderDocuments = (values: Record<string, TemplateValue>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = yield* path.fromFileUrl(new URL("../../static/", import.meta.url))
    const read = (name: string) => fs.readFileString(path.join(dir, name))
    const text = (name: string) =>
      Effect.flatMap(read(name), (source) => Effect.try(() => renderText(source, values, name)))
    const json = (name: string) =>
      Effect.flatMap(read(name), (source) => Effect.try(() => renderJson(source, values, name)))
    return yield* Effect.all({
      llms: text(TEMPLATES.llms),
      agentsMd: text(TEMPLATES.agentsMd),
      agentsTxt: text(TEMPLATES.agentsTxt),
      agentsJson: json(TEMPLATES.agentsJson),
      index: json(TEMPLATES.index),
      starter: text(TEMPLATES.starter)
    }) satisfies Effect.Effect<Rendered, unknown, unknown>
  }).pipe(Effect.orDie)
