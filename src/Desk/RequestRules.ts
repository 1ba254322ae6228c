/**
 * Which requests the edge treats how: read for a body (and so can answer 400/413/415), counted against the rate
 * limit (and so can answer 429). The edge applies these rules and the OpenAPI document states them, so both read
 * them here and cannot disagree. Which routes read the database (and so can answer 503) is stated here too.
 */

const discoveryDocuments = new Set([
  "/llms.txt",
  "/AGENTS.md",
  "/agents.txt",
  "/agents.json",
  "/tools.json",
  "/index.json",
  "/starter.md",
  "/openapi.json"
])

/** Routes answered from what the desk built at startup, beside the discovery documents and `/.well-known/*`. */
const answeredFromMemory = new Set(["/api/status", "/api/surface", "/api/example", "/api/template"])

/**
 * A route that reads the database, and so answers 503 `unavailable` with Retry-After while it does not answer
 * (src/Http/Failures.ts): every route but the discovery documents, `/.well-known/*`, the documents answered from
 * memory above and `/mcp`, whose tools answer a database outage as a tool result (`isError`), not as a status.
 * Paths as routed (`/api/handoffs/{id}` or `/api/handoffs/DESK-12`); test/discovery/OpenApiOutage.test.ts asks each
 * route of a desk whose database is gone.
 */
export const readsDatabase = (path: string): boolean =>
  !(discoveryDocuments.has(path) || answeredFromMemory.has(path) || path.startsWith("/.well-known/") ||
    path === "/mcp" || path.startsWith("/mcp/"))

/** A request whose body the edge reads, bounds and checks as JSON. */
export const readsBody = (method: string): boolean => method !== "GET" && method !== "HEAD" && method !== "OPTIONS"

/**
 * Everything is limited except reads of `GET /api/health`, the discovery documents and `/.well-known/*`.
 * Paths are compared raw and exactly: a spelling the router might normalise differently is limited.
 */
export const isRateLimited = (method: string, path: string): boolean => {
  if (method !== "GET" && method !== "HEAD") return true
  return !(path === "/api/health" || discoveryDocuments.has(path) || path.startsWith("/.well-known/"))
}

const BODY_PATH = /^\/api\/handoffs\/[^/]+\/body$/
const PREVIEW_PATH = /^\/api\/handoffs\/[^/]+$/

/**
 * A read by key that boards a statement shared with every such read arriving meanwhile (src/Boarding.ts): a
 * preview by id and a reader's body. It holds no database connection of its own (one batch holds one), so a turn
 * would only shrink its batch and add the turn-keeping: under 64 connections, with turns for twice the pool, a
 * preview cost 407 µs of desk CPU against 337 without, and an unlock + body request 739 against 646
 * (`npm run bench:compare`, three alternating rounds, docs/benchmark.md). A
 * body read that carries an x402 payment (`X-PAYMENT`, `PAYMENT-SIGNATURE`) settles, as an unlock does: it must
 * not hold a read's turn while its block comes either.
 */
const boardsSharedRead = (path: string) => PREVIEW_PATH.test(path) || BODY_PATH.test(path)

/**
 * A request that waits for a turn before the desk works on it (src/Http/Admission.ts): a limited read of the
 * database. Turns bound the reads waiting inside the desk for a database connection; a read answered from memory
 * (`/api/status`, `/api/template`, ...) never waits for one and goes straight in, as do requests with a body (their
 * client decides how long sending it takes), `/mcp` (its GET is an event stream), the exempt reads above, which
 * answer even while every turn is held by reads stuck on the database, and a read by key that boards a shared
 * statement (`boardsSharedRead`, a paying body read among them).
 */
export const waitsForTurn = (method: string, path: string): boolean =>
  (method === "GET" || method === "HEAD") && readsDatabase(path) && isRateLimited(method, path) &&
  !boardsSharedRead(path)

/**
 * The route that refuses a body that is no JSON in its own protocol's words (JSON-RPC's Parse error at /mcp, as the
 * MCP SDK answers it), not with 400 `invalid_json`.
 */
export const speaksJsonRpc = (method: string, path: string): boolean => method === "POST" && path === "/mcp"
