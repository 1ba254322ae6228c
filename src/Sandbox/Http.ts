import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { DeskApi } from "../Api.ts"
import { Catalog } from "../Catalog.ts"
import { DeskConfig } from "../Config.ts"
import { moneyWords } from "../Desk/RailWords.ts"
import { randomHex } from "../Domain/RandomHex.ts"
import { answeredPrivately } from "../Http/Respond.ts"
import { type Rail, RailProfile } from "../Settlement.ts"
import type { SandboxResponse } from "./Responses.ts"

/** The database default of agents.spend_cap_micro, in USD. */
const DEFAULT_CAP_USD = 10

const JSON_ONLY = { Accept: "application/json" }

const freshAgentId = () => `did:desk:${randomHex(16)}`

const outside = (rail: Rail) =>
  rail.x402Ready
    ? `Outside the sandbox, unlocks are paid in ${moneyWords(rail)}.`
    : "Outside the sandbox too, this desk keeps ledger receipts, no USDC: no chain is configured."

export const sandboxFor = (site: string, rail: Rail, demoId: string, agent: string): SandboxResponse => ({
  name: "Handoff Desk sandbox",
  free: true,
  usdcRequired: false,
  stage: rail.stage,
  note: `A free run of the loop over the demo packet ${demoId}: no USDC moves and nothing counts against a spend ` +
    `cap. ${outside(rail)} The steps use a fresh identity made for you (agentId); keep it, or put your own in both ` +
    `X-AGENT-ID and payer. Urls are paths on this desk (${site}).`,
  agentId: agent,
  handoffId: demoId,
  steps: [
    {
      method: "GET",
      url: "/api/status",
      pay: false,
      headers: JSON_ONLY,
      use: rail.x402Ready
        ? "network, asset and whether X-PAYMENT is required"
        : "x402Ready false: ledger receipts, no USDC on this desk"
    },
    { method: "GET", url: "/api/example", pay: false, headers: JSON_ONLY, use: "the shape of a sealed body, free" },
    {
      method: "GET",
      url: `/api/discover?q=${encodeURIComponent("stale statistics")}&include=demo`,
      pay: false,
      headers: JSON_ONLY,
      use: `items: previews only; ${demoId} is the demo packet (hidden unless include=demo)`
    },
    {
      method: "POST",
      url: `/api/handoffs/${demoId}/unlock`,
      pay: false,
      headers: { ...JSON_ONLY, "Content-Type": "application/json", "X-AGENT-ID": agent },
      body: { payer: agent },
      use:
        "receipt: kind demo, no USDC moved. Outside the sandbox this is the step that costs priceUsd: ask your owner first"
    },
    {
      method: "GET",
      url: `/api/handoffs/${demoId}/body`,
      pay: false,
      headers: { ...JSON_ONLY, "X-AGENT-ID": agent },
      use: "body: the sealed Markdown, now yours to read again for free"
    }
  ],
  spendControl: {
    header: "X-AGENT-ID",
    defaultCapUsd: DEFAULT_CAP_USD,
    raise: "Only with your owner's consent: POST /api/agents with X-AGENT-ID: <your id> and " +
      "{\"id\": <your id>, \"spendCapUsd\": <new cap>}"
  }
})

export const SandboxHttp = HttpApiBuilder.group(DeskApi, "sandbox", (handlers) =>
  Effect.gen(function*() {
    const catalog = yield* Catalog
    const config = yield* DeskConfig
    const rail = yield* RailProfile
    return handlers.handle("sandbox", () =>
      Effect.gen(function*() {
        const demoId = yield* catalog.demoId
        // The demo packet is filed at startup (src/Desk.ts), so its absence is a fault, not a client error.
        if (Option.isNone(demoId)) return yield* Effect.dieMessage("the demo packet is missing")
        // Each answer names a fresh identity of its own: no cache may hand it to another agent.
        yield* answeredPrivately
        return sandboxFor(config.publicUrl, rail, demoId.value, freshAgentId())
      }))
  }))
