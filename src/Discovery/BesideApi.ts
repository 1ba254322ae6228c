/** Where the MCP server answers (src/Mcp/Http.ts): a route beside the API, listed here with the others. */
export const MCP_PATH = "/mcp"

/** How a route beside the API answers: a JSON object, no body, a JSON-RPC error, or the 405 envelope. */
export type BesideBody = "object" | "empty" | "jsonRpcError" | "methodNotAllowed"

export interface BesideAnswer {
  readonly status: number
  readonly description: string
  readonly body: BesideBody
}

/** A route served on the HttpApi's router but outside the HttpApi definition (src/Mcp/Http.ts). */
export interface BesideRoute {
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly summary: string
  readonly group: "mcp" | "discovery"
  readonly answers: ReadonlyArray<BesideAnswer>
}

const postOnly = [{ status: 405, description: "", body: "methodNotAllowed" }] as const

const json = (description: string) => [{ status: 200, description, body: "object" }] as const

/** Checked against the running router by test/discovery/OpenApi.test.ts, so this list cannot drift unseen. */
export const BESIDE_API: ReadonlyArray<BesideRoute> = [
  {
    method: "POST",
    path: MCP_PATH,
    summary: "Model Context Protocol: JSON-RPC over stateless Streamable HTTP, answered as JSON",
    group: "mcp",
    answers: [
      { status: 200, description: "A JSON-RPC response; tool failures are results with isError true", body: "object" },
      { status: 202, description: "A notification or response was accepted; no body", body: "empty" },
      {
        status: 400,
        description:
          "Not a valid JSON-RPC message, or a batch (an array of messages): MCP has no batching, send one per POST",
        body: "jsonRpcError"
      },
      { status: 406, description: "Accept must list both application/json and text/event-stream", body: "jsonRpcError" }
    ]
  },
  {
    method: "GET",
    path: MCP_PATH,
    summary: "Refused: the MCP endpoint takes POST only",
    group: "mcp",
    answers: postOnly
  },
  {
    method: "DELETE",
    path: MCP_PATH,
    summary: "Refused: the MCP endpoint keeps no session",
    group: "mcp",
    answers: postOnly
  },
  {
    method: "GET",
    path: "/tools.json",
    summary: "The MCP tools as tools/list returns them, and where to call them",
    group: "discovery",
    answers: json("name, mcp (transport, endpoint, url), identity, tools")
  },
  {
    method: "GET",
    path: "/.well-known/mcp/server-card.json",
    summary: "MCP server card: identity, remotes, capabilities and tools",
    group: "discovery",
    answers: json("The server card (draft SEP-2127 and SEP-1649 members)")
  },
  {
    method: "GET",
    path: "/.well-known/mcp/server-card",
    summary: "The MCP server card, at its extension-less address",
    group: "discovery",
    answers: json("The same card as /.well-known/mcp/server-card.json")
  }
]
