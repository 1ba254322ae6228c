import { Effect, Option } from "effect"
import type { DeskSettings } from "../Config.ts"
import { rateLimitWords, type RatePolicy } from "../RateLimiter.ts"
import type { ReceiptSigning } from "../ReceiptSigning.ts"
import type { Rail, Settlement } from "../Settlement.ts"
import { moneyWords, payoutWords, statusNote } from "./RailWords.ts"
import { publishedSigner, type StatusResponse } from "./Responses.ts"

const FOR_AGENTS = {
  search: "GET /api/discover?q=<what you are about to do>",
  preview: "GET /api/handoffs/:id",
  unlock: "POST /api/handoffs/:id/unlock with X-AGENT-ID and {\"payer\": <your id>}",
  body: "GET /api/handoffs/:id/body with X-AGENT-ID",
  file: "POST /api/handoffs with X-AGENT-ID (free)",
  sandbox: "GET /api/sandbox (free loop over the demo packet, no USDC)",
  mcp: "POST /mcp (Model Context Protocol, Streamable HTTP; tools in /tools.json)"
}

/** The status object of GET /api/status, also the result of the MCP desk_status tool. */
export const deskStatus = (
  config: DeskSettings,
  rail: Rail,
  settlement: Settlement["Type"],
  signing: ReceiptSigning["Type"],
  policy: RatePolicy
): Effect.Effect<typeof StatusResponse.Type> =>
  Effect.map(facilitatorReachable(settlement), (reachable) => statusOf(config, rail, signing, policy, reachable))

export const facilitatorReachable = (settlement: Settlement["Type"]): Effect.Effect<boolean> =>
  Option.match(settlement, { onNone: () => Effect.succeed(false), onSome: (_) => _.facilitatorReachable })

/** Everything in the status but the facilitator's reachability is fixed when the desk starts. */
export const statusOf = (
  config: DeskSettings,
  rail: Rail,
  signing: ReceiptSigning["Type"],
  policy: RatePolicy,
  facilitatorReachable: boolean
): typeof StatusResponse.Type => ({
  ok: true,
  site: config.publicUrl,
  stage: rail.stage,
  network: rail.network,
  label: rail.x402Ready ? rail.label : moneyWords(rail),
  asset: rail.asset,
  assetAddress: rail.assetAddress,
  eip712: rail.eip712,
  payTo: rail.payTo,
  x402Ready: rail.x402Ready,
  deskFallback: !config.paymentRequired,
  required: config.paymentRequired,
  facilitatorKind: rail.facilitatorKind,
  facilitatorReachable,
  note: statusNote(rail),
  payout: {
    enabled: rail.payoutEnabled,
    configured: rail.payoutEnabled,
    ethersInstalled: false,
    note: payoutWords(rail)
  },
  receiptSigner: Option.getOrNull(Option.map(signing.key, (key) => publishedSigner(key, config.publicUrl))),
  forAgents: { ...FOR_AGENTS, rateLimit: rateLimitWords(policy) }
})
