import { MCP_PATH } from "../Mcp/Api.ts"

/**
 * A route served on the HttpApi's router but outside the HttpApi definition: only the refusals of GET and DELETE
 * on /mcp (src/Mcp/Http.ts), which answer nothing but 405, something an HttpApi endpoint cannot state.
 */
export interface BesideRoute {
  readonly method: "GET" | "DELETE"
  readonly path: string
  readonly summary: string
}

/** Checked against the running router by test/discovery/OpenApi.test.ts, so this list cannot drift unseen. */
export const BESIDE_API: ReadonlyArray<BesideRoute> = [
  { method: "GET", path: MCP_PATH, summary: "Refused: the MCP endpoint takes POST only" },
  { method: "DELETE", path: MCP_PATH, summary: "Refused: the MCP endpoint keeps no session" }
]
