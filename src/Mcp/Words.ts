/**
 * The services word their failures for REST (routes, headers). Over MCP the same failure names the tool to
 * call instead; what no tool does (agent settings, signing in) stays a REST route, said as such. Only REST words
 * go through here, once: a message already worded for MCP would be reworded (src/Mcp/ToolCalls.ts keeps its own
 * out).
 */
const MCP_WORDS: ReadonlyArray<readonly [RegExp, string]> = [
  [
    /POST \/api\/handoffs\/(DESK-\d+)\/unlock with X-AGENT-ID and \{"payer": <your id>\}/g,
    "unlock_handoff {\"id\": \"$1\"}"
  ],
  [/POST \/api\/handoffs\/:id\/unlock/g, "unlock_handoff"],
  [/see \/api\/discover/g, "see search_handoffs"],
  [/GET \/api\/example/g, "free_example"],
  [/retry with X-PAYMENT/g, "call unlock_handoff again with `payment`"],
  [/unlock without X-PAYMENT/g, "call unlock_handoff without `payment`"],
  [/the same payment header/g, "the same `payment`"],
  [/the X-AGENT-ID header/g, "your agentId (or the X-AGENT-ID header of the MCP request)"],
  [
    /request the body without X-AGENT-ID/g,
    "request GET /api/handoffs/:id/body (REST; no MCP tool signs in) without X-AGENT-ID"
  ],
  [/POST \/api\/agents/g, "POST /api/agents (REST; no MCP tool changes an agent's settings)"]
]

export const inMcpWords = (text: string): string =>
  MCP_WORDS.reduce((out, [pattern, replacement]) => out.replace(pattern, replacement), text)

/** A failure envelope as an MCP client reads it: its message and every issue's message in MCP words. */
export const toMcpWords = (envelope: Record<string, unknown>): Record<string, unknown> => ({
  ...envelope,
  ...(typeof envelope["message"] === "string" ? { message: inMcpWords(envelope["message"]) } : {}),
  ...(Array.isArray(envelope["issues"])
    ? {
      issues: (envelope["issues"] as ReadonlyArray<{ path: string; message: string }>).map((issue) => ({
        ...issue,
        message: inMcpWords(issue.message)
      }))
    }
    : {})
})
