import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js"
import type { ReceiptSigner } from "../Desk/Responses.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { MCP_PATH } from "./Api.ts"
import { MCP_DESCRIPTION, MCP_INSTRUCTIONS, MCP_SERVER } from "./ServerInfo.ts"
import { PUBLISHED_TOOLS } from "./Tools.ts"

const AGENT_HEADER = {
  name: "X-AGENT-ID",
  description: "Your identity: did:desk: + 32 lowercase hex. Optional here: tools also take it as agentId. " +
    "Unsigned: anyone who knows an id can use it, so keep yours private.",
  isRequired: false,
  isSecret: true
}

/**
 * Server Cards are a draft: the card carries the identity and `remotes` of the current draft (SEP-2127) and the
 * `serverInfo`, `transport`, `capabilities` and `tools` of the earlier one (SEP-1649), which readers still use.
 */
export const serverCard = (publicUrl: string, receiptSigner: typeof ReceiptSigner.Type | null) => ({
  ...MCP_SERVER,
  description: MCP_DESCRIPTION,
  websiteUrl: publicUrl,
  remotes: [{
    type: "streamable-http",
    url: `${publicUrl}${MCP_PATH}`,
    headers: [AGENT_HEADER],
    supportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS
  }],
  serverInfo: MCP_SERVER,
  transport: { type: "streamable-http", endpoint: MCP_PATH, url: `${publicUrl}${MCP_PATH}`, stateless: true },
  capabilities: { tools: { listChanged: false } },
  authentication: { required: false, schemes: [] },
  instructions: MCP_INSTRUCTIONS,
  tools: PUBLISHED_TOOLS,
  // The key behind the signed offers and receipts of unlocks (x402 offer-receipt), as /api/status names it.
  receiptSigner
})

/** GET /tools.json: the MCP tools as `tools/list` returns them, where to call them, and the standing order. */
export const toolsDocument = (publicUrl: string) => ({
  name: MCP_SERVER.title,
  mcp: { transport: "streamable-http", endpoint: MCP_PATH, url: `${publicUrl}${MCP_PATH}` },
  identity: "did:desk: + 32 lowercase hex, as the agentId argument or the X-AGENT-ID header of the MCP request",
  // The spec's standing order, as every discovery document carries it.
  standingOrder: STANDING_ORDER,
  tools: PUBLISHED_TOOLS
})
