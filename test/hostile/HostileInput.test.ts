import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { gzipSync } from "node:zlib"
import { deskOn, TestDesk } from "../support/Desk.ts"
import { BODY, filing, newAgentId } from "../support/Fixtures.ts"
import { send } from "../support/Loopback.ts"
import { rowCounts } from "../support/RowCounts.ts"
import { backends } from "../support/Storage.ts"

interface Target {
  readonly handoff: string
  readonly filer: string
  /** Has unlocked `handoff`. */
  readonly buyer: string
}

interface Hostile {
  readonly name: string
  readonly method?: "GET" | "POST"
  readonly path: string
  readonly headers?: Record<string, string>
  /** Sent as JSON text unless a string or bytes (sent as they are). */
  readonly body?: unknown
  readonly status: number
  readonly error: string
  /** The answer's issues, where the row names them. */
  readonly issues?: ReadonlyArray<{ readonly path: string; readonly message: string }>
}

/** The id with its first hex digit swapped for one that looks the same: Cyrillic а, or a fullwidth digit. */
const lookAlike = (id: string, glyph = "\u0430") => `did:desk:${glyph}${id.slice(10)}`
const fullwidth = (id: string) => lookAlike(id, "\uff10")
/** A header value that Node will send: the UTF-8 bytes of the text, one latin1 character per byte. */
const asHeader = (text: string) => Buffer.from(text, "utf8").toString("latin1")
const SQL = "' OR '1'='1'; DROP TABLE handoffs; --"
const q = encodeURIComponent

const filingWith = (t: Target, overrides: Record<string, unknown>): Hostile => ({
  name: `filing with ${JSON.stringify(overrides).slice(0, 60)}`,
  path: "/api/handoffs",
  headers: { "x-agent-id": t.filer },
  body: filing(t.filer, overrides),
  status: 422,
  error: "invalid_handoff"
})

/** The valid filing as JSON text with one value replaced by raw text JSON.stringify cannot produce. */
const rawFiling = (t: Target, field: string, raw: string, status: number, error: string): Hostile => ({
  name: `filing with ${field}: ${raw}`,
  path: "/api/handoffs",
  headers: { "x-agent-id": t.filer },
  body: JSON.stringify(filing(t.filer)).replace(new RegExp(`"${field}":[^,]+`), `"${field}":${raw}`),
  status,
  error
})

const filingRows = (t: Target): ReadonlyArray<Hostile> => [
  // Wrong types, one field at a time.
  ...Object.entries({
    title: 42,
    teaser: ["a"],
    body: { text: BODY },
    filer: true,
    filerDid: 7,
    priceUsd: "0.5",
    reconstructUsd: null,
    minutes: "thirty",
    tags: "ruby",
    contains: [1, 2],
    doesNotContain: { a: 1 },
    whyPay: 3,
    provenance: "anthropic",
    payoutAddress: 12
  }).map(([field, value]) => filingWith(t, { [field]: value })),
  filingWith(t, { provenance: { inputTokens: 1.5 } }),
  filingWith(t, { provenance: { totalTokens: 1e20 } }),
  filingWith(t, { provenance: { durationMinutes: -1 } }),
  // Amounts: negative, zero, too fine, too large, spelled as text.
  filingWith(t, { priceUsd: -0.5 }),
  filingWith(t, { priceUsd: 0 }),
  filingWith(t, { priceUsd: 0.0000001 }),
  filingWith(t, { priceUsd: 1e10, reconstructUsd: 1e11 }),
  filingWith(t, { priceUsd: Number.MAX_VALUE }),
  filingWith(t, { priceUsd: "NaN" }),
  filingWith(t, { priceUsd: "Infinity" }),
  filingWith(t, { reconstructUsd: -40 }),
  filingWith(t, { minutes: -1 }),
  filingWith(t, { minutes: 1e300 }),
  rawFiling(t, "priceUsd", "1e400", 422, "invalid_handoff"),
  rawFiling(t, "reconstructUsd", "-1e400", 422, "invalid_handoff"),
  rawFiling(t, "priceUsd", "NaN", 400, "invalid_json"),
  rawFiling(t, "priceUsd", "Infinity", 400, "invalid_json"),
  rawFiling(t, "priceUsd", "0x10", 400, "invalid_json"),
  // NUL characters and unpaired surrogates, which PostgreSQL cannot store as sent.
  filingWith(t, { title: "Sidekiq\u0000retries" }),
  filingWith(t, { body: `${BODY}\u0000` }),
  filingWith(t, { filer: "\u0000" }),
  filingWith(t, { tags: ["ruby\u0000"] }),
  filingWith(t, { provenance: { vendor: "Anthropic\u0000" } }),
  filingWith(t, { whyPay: "half \ud800 a pair" }),
  // Very long strings and arrays.
  filingWith(t, { title: "t".repeat(201) }),
  filingWith(t, { teaser: "t".repeat(300_000) }),
  filingWith(t, { body: `${BODY}${"ab ".repeat(70_000)}` }),
  filingWith(t, { tags: Array.from({ length: 21 }, (_, i) => `tag${i}`) }),
  filingWith(t, { contains: Array.from({ length: 31 }, () => "Failed approaches") }),
  filingWith(t, { doesNotContain: ["x".repeat(201)] }),
  {
    name: "filing with 5,000 tags",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: filing(t.filer, { tags: Array.from({ length: 5_000 }, (_, i) => `t${i}`) }),
    // Over the field's documented maximum, as 21 tags are: the filing's 422, named before decoding it.
    status: 422,
    error: "invalid_handoff"
  },
  {
    name: "filing with 101 tags, each wrong",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: filing(t.filer, { tags: Array.from({ length: 101 }, () => 7) }),
    // Named before the items are decoded (each wrong one would be an issue formatted): the list's length alone.
    status: 422,
    error: "invalid_handoff",
    issues: [{ path: "tags", message: "has more than 100 items, far over its maximum" }]
  },
  {
    name: "a top-level array of 5,000 items",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: JSON.stringify(Array.from({ length: 5_000 }, () => 0)),
    status: 400,
    error: "invalid_json"
  },
  {
    name: "filing whose body is over 1 MiB",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: filing(t.filer, { body: `${BODY}${"x".repeat(1024 * 1024)}` }),
    status: 413,
    error: "payload_too_large"
  },
  {
    name: "filing that declares a body of a gigabyte",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer, "content-length": String(1024 ** 3) },
    body: "{}",
    status: 413,
    error: "payload_too_large"
  },
  {
    name: "filing nested 100,000 levels deep",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: `{"provenance":{"tools":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`,
    status: 400,
    error: "invalid_json"
  },
  // Identities: look-alikes, other case, NUL, missing header.
  filingWith(t, { filerDid: lookAlike(t.filer) }),
  filingWith(t, { filerDid: t.filer.toUpperCase().replace("DID:DESK:", "did:desk:") }),
  filingWith(t, { filerDid: `${t.filer}\u0000` }),
  {
    ...filingWith(t, {}),
    name: "filing under a look-alike X-AGENT-ID",
    headers: { "x-agent-id": asHeader(lookAlike(t.filer)) },
    status: 400,
    error: "invalid_agent_id"
  },
  { ...filingWith(t, {}), name: "filing without X-AGENT-ID", headers: {}, status: 401, error: "agent_id_required" },
  {
    ...filingWith(t, {}),
    name: "filing by another identity than filerDid",
    headers: { "x-agent-id": newAgentId() },
    status: 422,
    error: "invalid_handoff"
  },
  filingWith(t, { hash: "0".repeat(64), purchases: 1000 }),
  filingWith(t, { payoutAddress: "0x0000000000000000000000000000000000000000" }),
  // Malformed JSON, wrong content types, bytes that are not UTF-8.
  ...[`{"title": }`, `{"title":"a",}`, `{'title':'a'}`, `{"title":"a"`, `{"title":"a\u0000"}`].map((body) => ({
    name: `malformed JSON ${JSON.stringify(body)}`,
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body,
    status: 400,
    error: "invalid_json"
  })),
  ...[
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=x",
    "application/xml",
    "application/merge-patch+json"
  ]
    .map((type) => ({
      name: `filing sent as ${type}`,
      path: "/api/handoffs",
      headers: { "x-agent-id": t.filer, "content-type": type },
      body: JSON.stringify(filing(t.filer)),
      status: 415,
      error: "unsupported_media_type"
    })),
  {
    name: "filing sent gzip-encoded",
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer, "content-type": "application/json", "content-encoding": "gzip" },
    body: gzipSync(JSON.stringify(filing(t.filer))),
    status: 415,
    error: "unsupported_media_type"
  },
  ...[
    ["a latin1 é", Buffer.from(JSON.stringify(filing(t.filer, { title: "Caf\u00e9 sidekiq" })), "latin1")],
    ["an invalid byte", Buffer.concat([Buffer.from(`{"title":"`), Buffer.from([0xff, 0xfe]), Buffer.from(`"}`)])],
    ["an overlong slash", Buffer.concat([Buffer.from(`{"title":"`), Buffer.from([0xc0, 0xaf]), Buffer.from(`"}`)])],
    [
      "an encoded surrogate",
      Buffer.concat([Buffer.from(`{"title":"`), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(`"}`)])
    ],
    ["UTF-16", Buffer.from(JSON.stringify(filing(t.filer)), "utf16le")]
  ].map(([label, bytes]) => ({
    name: `filing with ${label as string}`,
    path: "/api/handoffs",
    headers: { "x-agent-id": t.filer },
    body: bytes,
    status: 400,
    error: "invalid_json"
  }))
]

const unlockRows = (t: Target): ReadonlyArray<Hostile> => {
  const stranger = newAgentId()
  const unlock = (name: string, over: Partial<Hostile>): Hostile => ({
    name: `unlock: ${name}`,
    path: `/api/handoffs/${t.handoff}/unlock`,
    headers: { "x-agent-id": stranger },
    body: { payer: stranger },
    status: 422,
    error: "invalid_request",
    ...over
  })
  return [
    unlock("payer as a number", { body: { payer: 1 } }),
    unlock("no payer", { body: {} }),
    unlock("JSON null", { body: "null" }),
    unlock("an array", { body: "[]" }),
    unlock("an extra amount field", { body: { payer: stranger, priceUsd: 0 } }),
    unlock("payer with a NUL", { body: { payer: `${stranger}\u0000` } }),
    unlock("payer a look-alike of the header", { body: { payer: lookAlike(stranger) } }),
    unlock("payer someone else", { body: { payer: t.buyer } }),
    unlock("malformed JSON", { body: `{"payer":`, status: 400, error: "invalid_json" }),
    unlock("a list of 5,000 items", { body: { payer: stranger, extra: Array.from({ length: 5_000 }, () => 0) } }),
    unlock("text/plain", {
      headers: { "x-agent-id": stranger, "content-type": "text/plain" },
      status: 415,
      error: "unsupported_media_type"
    }),
    unlock("no X-AGENT-ID", { headers: {}, status: 401, error: "agent_id_required" }),
    unlock("a fullwidth digit in X-AGENT-ID", {
      headers: { "x-agent-id": asHeader(fullwidth(stranger)) },
      status: 400,
      error: "invalid_agent_id"
    }),
    unlock("a garbage X-PAYMENT", {
      headers: { "x-agent-id": stranger, "x-payment": "'; DROP TABLE receipts; --" },
      status: 402,
      error: "payment_invalid"
    }),
    unlock("a fullwidth handoff id", {
      path: `/api/handoffs/DESK-${q("\uff11")}/unlock`,
      status: 404,
      error: "not_found"
    }),
    unlock("an encoded path traversal", {
      path: `/api/handoffs/..%2F..%2Fetc%2Fpasswd/unlock`,
      status: 404,
      error: "not_found"
    }),
    unlock("SQL in the id", { path: `/api/handoffs/${q(`DESK-1${SQL}`)}/unlock`, status: 404, error: "not_found" }),
    unlock("an unknown handoff", { path: `/api/handoffs/DESK-999999999/unlock`, status: 404, error: "not_found" }),
    unlock("an id past 2^53", {
      path: `/api/handoffs/DESK-99999999999999999999/unlock`,
      status: 404,
      error: "not_found"
    })
  ]
}

const feedbackRows = (t: Target): ReadonlyArray<Hostile> => {
  const feedback = (name: string, over: Partial<Hostile>): Hostile => ({
    name: `feedback: ${name}`,
    path: `/api/handoffs/${t.handoff}/feedback`,
    headers: { "x-agent-id": t.buyer },
    body: { useful: true },
    status: 422,
    error: "invalid_request",
    ...over
  })
  return [
    feedback("useful as text", { body: { useful: "yes" } }),
    feedback("useful as a number", { body: { useful: 1 } }),
    feedback("no useful", { body: {} }),
    feedback("an extra field", { body: { useful: true, useful_count: 100 } }),
    feedback("no X-AGENT-ID", { headers: {}, status: 401, error: "agent_id_required" }),
    feedback("an identity that never unlocked", {
      headers: { "x-agent-id": newAgentId() },
      status: 403,
      error: "not_unlocked"
    }),
    feedback("DESK-1/../2", { path: `/api/handoffs/DESK-1/../2/feedback`, status: 404, error: "not_found" }),
    feedback("an unknown handoff", { path: `/api/handoffs/DESK-0/feedback`, status: 404, error: "not_found" })
  ]
}

const agentRows = (t: Target): ReadonlyArray<Hostile> => {
  const fresh = newAgentId()
  const register = (name: string, body: unknown, over: Partial<Hostile> = {}): Hostile => ({
    name: `register: ${name}`,
    path: "/api/agents",
    headers: { "x-agent-id": fresh },
    body,
    status: 422,
    error: "invalid_request",
    ...over
  })
  return [
    register("negative spend cap", { id: fresh, spendCapUsd: -1 }),
    register("spend cap under a micro-USDC", { id: fresh, spendCapUsd: 1e-7 }),
    register("spend cap over a billion", { id: fresh, spendCapUsd: 1e10 }),
    register("spend cap NaN", { id: fresh, spendCapUsd: "NaN" }),
    register("spend cap Infinity", { id: fresh, spendCapUsd: "Infinity" }),
    register("spend cap 1e400", `{"id":"${fresh}","spendCapUsd":1e400}`),
    register("payout address with a bad checksum", {
      id: fresh,
      payoutAddress: "0x52908400098527886e0F7030069857D2E4169EE7"
    }),
    register("payout address too short", { id: fresh, payoutAddress: "0x1234" }),
    register("payout address as a number", { id: fresh, payoutAddress: 1 }),
    register("payoutSignedAt that is no time", { id: fresh, spendCapUsd: 20, payoutSignedAt: "garbage" }),
    register("payoutSignedAt on February 30", { id: fresh, spendCapUsd: 20, payoutSignedAt: "2026-02-30T00:00:00Z" }),
    register("Cyrillic look-alike id", { id: lookAlike(fresh), spendCapUsd: 5 }),
    register("fullwidth digit id", { id: fullwidth(fresh), spendCapUsd: 5 }),
    register("uppercase hex id", { id: fresh.toUpperCase(), spendCapUsd: 5 }),
    register("id with a NUL", { id: `${fresh}\u0000`, spendCapUsd: 5 }),
    register("SQL as the id", { id: SQL, spendCapUsd: 5 }),
    register("neither payout address nor cap", { id: fresh }),
    register("an empty object", {}),
    register("a payout signature that is not hex", {
      id: t.filer,
      payoutAddress: "0x52908400098527886E0F7030069857D2E4169EE7".toLowerCase(),
      payoutSignature: "0xZZ"
    }, { headers: { "x-agent-id": t.filer } }),
    register("an unknown field", { id: fresh, spendCapUsd: 5, spentUsd: 0 }),
    register("the zero address as payout address", {
      id: fresh,
      payoutAddress: "0x0000000000000000000000000000000000000000"
    }),
    register("no X-AGENT-ID", { id: t.buyer, spendCapUsd: 0 }, {
      headers: {},
      status: 401,
      error: "agent_id_required"
    }),
    register("a look-alike X-AGENT-ID", { id: t.buyer, spendCapUsd: 0 }, {
      headers: { "x-agent-id": asHeader(lookAlike(t.buyer)) },
      status: 400,
      error: "invalid_agent_id"
    }),
    register("another agent's cap", { id: t.buyer, spendCapUsd: 0 }, {
      headers: { "x-agent-id": t.filer },
      status: 403,
      error: "agent_mismatch"
    }),
    register("another agent's payout address", {
      id: t.filer,
      payoutAddress: "0x52908400098527886E0F7030069857D2E4169EE7"
    }, { headers: { "x-agent-id": t.buyer }, status: 403, error: "agent_mismatch" })
  ]
}

const get = (path: string, status: number, error: string, headers: Record<string, string> = {}): Hostile => ({
  name: `GET ${path.slice(0, 80)}`,
  method: "GET",
  path,
  headers,
  status,
  error
})

const getRows = (t: Target): ReadonlyArray<Hostile> => [
  get("/api/handoffs/..%2F..%2Fetc%2Fpasswd", 404, "not_found"),
  get("/api/handoffs/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd", 404, "not_found"),
  get("/api/handoffs/DESK-1/../2", 404, "not_found"),
  get("/api/handoffs/DESK-1%2F..%2F2/body", 404, "not_found"),
  get("/api/handoffs/DESK-1%00", 404, "not_found"),
  get(`/api/handoffs/DESK-${q("\uff11")}`, 404, "not_found"),
  get(`/api/handoffs/${q(`DESK-1${SQL}`)}`, 404, "not_found"),
  get("/api/handoffs/DESK-99999999999999999999", 404, "not_found"),
  get("/api/handoffs/DESK-01", 404, "not_found"),
  get(`/api/agents/${q(lookAlike(t.filer))}`, 404, "not_found"),
  get(`/api/agents/${q(fullwidth(t.filer))}`, 404, "not_found"),
  get("/api/agents/%00", 404, "not_found"),
  get(`/api/agents/${q(SQL)}`, 404, "not_found"),
  get("/api/agents/..%2F..%2Fetc%2Fpasswd", 404, "not_found"),
  get(`/api/handoffs/${t.handoff}/body`, 400, "invalid_agent_id", { "x-agent-id": asHeader(lookAlike(t.buyer)) }),
  get(`/api/handoffs/${t.handoff}/body`, 400, "invalid_agent_id", { "x-agent-id": `${t.buyer}'--` }),
  ...["/api/discover", "/api/handoffs"].flatMap((route) => [
    get(`${route}?maxPrice=${q("1 OR 1=1")}`, 422, "invalid_query"),
    get(`${route}?minSavings=NaN`, 422, "invalid_query"),
    get(`${route}?minReconstruct=Infinity`, 422, "invalid_query"),
    get(`${route}?maxPrice=-1`, 422, "invalid_query"),
    get(`${route}?maxPrice=1e400`, 422, "invalid_query"),
    get(`${route}?maxPrice=0.1000000000000000001`, 422, "invalid_query"),
    get(`${route}?page=1.0000000000000000001`, 422, "invalid_query"),
    get(`${route}?since=${q(`2024-01-01${SQL}`)}`, 422, "invalid_query"),
    get(`${route}?since=-271821-04-20T00:00:00Z`, 422, "invalid_query"),
    get(`${route}?page=0`, 422, "invalid_query"),
    get(`${route}?page=${q("1;--")}`, 422, "invalid_query"),
    get(`${route}?limit=1e400`, 422, "invalid_query"),
    get(`${route}?sort=${q(`price${SQL}`)}`, 422, "invalid_query"),
    get(`${route}?include=${q("demo'")}`, 422, "invalid_query"),
    get(`${route}?q=%00`, 422, "invalid_query"),
    get(`${route}?tag=ruby%00`, 422, "invalid_query"),
    get(`${route}?vendor=${q(`x\u0000${SQL}`)}`, 422, "invalid_query"),
    get(`${route}?q=${"x".repeat(201)}`, 422, "invalid_query"),
    // %-escapes whose bytes are not UTF-8, as a body that is not UTF-8 is refused.
    get(`${route}?q=%FF%FE`, 422, "invalid_query"),
    get(`${route}?q=%C3%28`, 422, "invalid_query"),
    get(`${route}?tag=%FF`, 422, "invalid_query"),
    get(`${route}?vendor=%C0%AF`, 422, "invalid_query"),
    get(`${route}?sort=price&page=1000000000&limit=100`, 422, "invalid_query")
  ]),
  get(`/api/receipts?page=1000000000`, 422, "invalid_query"),
  get(`/api/receipts?payer=${q(SQL)}`, 422, "invalid_query"),
  get(`/api/receipts?filer=%00`, 422, "invalid_query"),
  get(`/api/receipts?payer=${q(lookAlike(t.buyer))}`, 422, "invalid_query"),
  get(`/api/receipts?page=0`, 422, "invalid_query"),
  get(`/api/receipts?limit=abc`, 422, "invalid_query"),
  get(`/api/receipts?limit=${q("1 UNION SELECT * FROM agents")}`, 422, "invalid_query")
]

/** SQL in free-text parameters is text to search for: a 200 like any other search, never an error. */
const searchesForSql = ["q", "tag", "vendor"].flatMap((param) =>
  ["/api/discover", "/api/handoffs"].map((route) => `${route}?${param}=${q(SQL)}&include=demo`)
).concat(
  // UTF-8 escapes are text, and a `%` that starts no escape is the character itself, as a browser's form reads it.
  "/api/discover?q=caf%C3%A9",
  "/api/discover?q=100%"
)

const request = (desk: TestDesk["Type"], row: Pick<Hostile, "method" | "path" | "headers" | "body">) => {
  const body = row.body === undefined || typeof row.body === "string" || Buffer.isBuffer(row.body)
    ? row.body as string | Buffer | undefined
    : JSON.stringify(row.body)
  return send(`${desk.url}${row.path}`, {
    fresh: true,
    method: row.method ?? "POST",
    ...(row.headers === undefined ? {} : { headers: row.headers }),
    ...(body === undefined ? {} : { body })
  })
}

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`hostile input over ${backend.name}`, () => {
    it.layer(deskOn(backend.layer), { timeout: 180_000 })((it) => {
      it.effect("each hostile request is a 4xx JSON error with a stable code, and writes nothing", () =>
        Effect.gen(function*() {
          const desk = yield* TestDesk
          const filer = newAgentId()
          const buyer = newAgentId()
          const filed = yield* request(desk, {
            path: "/api/handoffs",
            headers: { "x-agent-id": filer },
            body: filing(filer)
          })
          expect(filed.status).toBe(201)
          const target: Target = { handoff: filed.json.id, filer, buyer }
          const unlocked = yield* request(desk, {
            path: `/api/handoffs/${target.handoff}/unlock`,
            headers: { "x-agent-id": buyer },
            body: { payer: buyer }
          })
          expect(unlocked.status).toBe(200)

          const rows = [
            ...filingRows(target),
            ...unlockRows(target),
            ...feedbackRows(target),
            ...agentRows(target),
            ...getRows(target)
          ]
          expect(rows.length).toBeGreaterThanOrEqual(60)
          const before = yield* rowCounts

          const answers = []
          for (const row of rows) {
            const reply = yield* Effect.either(request(desk, row))
            answers.push(
              reply._tag === "Left"
                ? { name: row.name, status: 0, json: false, ok: undefined, error: reply.left.message }
                : {
                  name: row.name,
                  status: reply.right.status,
                  json: /^application\/json/.test(String(reply.right.headers["content-type"])),
                  ok: reply.right.json?.ok,
                  error: reply.right.json?.error,
                  issues: row.issues === undefined ? undefined : reply.right.json?.issues
                }
            )
          }
          // One assertion over the whole table, so a failure lists every row that answered differently.
          expect(answers).toEqual(
            rows.map((row) => ({
              name: row.name,
              status: row.status,
              json: true,
              ok: false,
              error: row.error,
              issues: row.issues
            }))
          )

          for (const path of searchesForSql) {
            const reply = yield* request(desk, { method: "GET", path })
            expect({ path, status: reply.status, items: Array.isArray(reply.json?.items) }).toEqual({
              path,
              status: 200,
              items: true
            })
          }

          // A parameter a route does not read is ignored, as any unknown one is, however it is encoded.
          for (
            const path of [
              "/openapi.json?x=%FF",
              "/api/status?x=%FF",
              `/api/handoffs/${target.handoff}?x=%C3%28`,
              "/api/discover?x=%FF&include=demo"
            ]
          ) {
            expect({ path, status: (yield* request(desk, { method: "GET", path })).status }).toEqual({
              path,
              status: 200
            })
          }
          // The catalog page answers a browser with its 422 page, as for any invalid parameter; JSON to an agent.
          const page = yield* Effect.promise(() =>
            fetch(`${desk.url}/?q=caf%E9`, { headers: { accept: "text/html" } }).then(async (response) => ({
              status: response.status,
              type: response.headers.get("content-type"),
              text: await response.text()
            }))
          )
          expect(page).toMatchObject({ status: 422, type: "text/html; charset=utf-8" })
          expect(page.text).toContain("%E9")

          expect(yield* rowCounts).toEqual(before)
          const still = yield* request(desk, { method: "GET", path: `/api/handoffs/${target.handoff}` })
          expect(still.json).toMatchObject({ id: target.handoff, purchases: 1, useful: 0, notUseful: 0 })
        }))
    })
  })
}
