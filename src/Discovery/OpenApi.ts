import { RETRY_AFTER_SECONDS } from "../Desk/Outage.ts"
import { isRateLimited, readsBody, readsDatabase, speaksJsonRpc } from "../Desk/RequestRules.ts"
import { Unavailable } from "../Domain/Errors.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { addBesideRoutes } from "./BesideApiOperations.ts"
import { type Json, membersOf, refName, schemaRef, type Spec } from "./OpenApiJson.ts"

/**
 * A body's JSON and type are judged only where a route reads one. A body over the limit is refused on any request,
 * a GET's too (its length is read before the route is), so `PayloadTooLarge` is on every operation.
 */
const BODY_ERRORS = new Set(["InvalidJson", "UnsupportedMediaType"])
/**
 * A query parameter refused by the edge (src/Http/QueryEncoding.ts): only on a route that reads query parameters
 * (a parameter it does not read is ignored), and never on one that reads a body.
 */
const QUERY_ERRORS = new Set(["InvalidQuery"])
const RATE_ERRORS = new Set(["RateLimited"])
const DATABASE_ERRORS = new Set(["Unavailable"])
/** The platform's own decode error: src/Http/Failures.ts answers every decode failure with a 422 envelope instead. */
const NEVER_SENT = new Set(["HttpApiDecodeError"])

const HEADER_NAMES: Record<string, string> = {
  "x-agent-id": "X-AGENT-ID",
  "x-payment": "X-PAYMENT",
  "payment-signature": "PAYMENT-SIGNATURE",
  "sign-in-with-x": "SIGN-IN-WITH-X"
}

const retryAfter = (description: string): Json => ({ description, schema: { type: "integer", minimum: 1 } })

const base64Json = (description: string): Json => ({
  description,
  schema: { type: "string", contentEncoding: "base64", contentMediaType: "application/json" }
})

const PAYMENT_REQUIRED = base64Json(
  "The x402 v2 challenge, base64 JSON (a fresh one when a payment was refused): `x402Version` 2, `error`, " +
    "`resource`, `accepts` (the v1 requirements of the response body, with a CAIP-2 `network` and `amount` in " +
    "micro-USDC) and `extensions`: `bazaar` (x402 Bazaar discovery: the unlock's method, body, X-AGENT-ID header " +
    "and an example answer); `payment-identifier` (x402 payment-identifier, optional: put your own id, 16 to 128 " +
    "letters, digits, `_` or `-`, in your payment's extensions and every retry under it gets the first purchase's " +
    "outcome, never a second charge); `sign-in-with-x` (body reads only: the message to sign with the paying " +
    "wallet and send as SIGN-IN-WITH-X); `offer-receipt` (`info.offers`: one signed offer per requirement, when " +
    "the desk signs). Sent by a desk that takes x402 payments (GET /api/status: x402Ready); see docs/settlement.md."
)

const SETTLEMENT_RETRY = retryAfter("Seconds to wait before retrying with the same payment (retryAfterSeconds)")

const PAYMENT_RECEIPT = "its `extensions[\"offer-receipt\"].info.receipt` is the desk's signed receipt of the sale " +
  "(x402 offer-receipt: the unlock URL, the paying wallet, the network, the transaction) when the desk signs"

/** x402's settlement response headers on `answer` (an unlock, a body read) paid with a payment that settled. */
const paymentResponses = (answer: string): Record<string, Json> => ({
  "PAYMENT-RESPONSE": base64Json(
    "x402 v2 settlement response, base64 JSON (`success`, `transaction`, `network`, `payer`, `amount`), on " +
      `${answer} paid with PAYMENT-SIGNATURE that settled; ${PAYMENT_RECEIPT}. Never on a desk receipt.`
  ),
  "X-PAYMENT-RESPONSE": base64Json(
    "x402 v1 settlement response, base64 JSON (`success`, `transaction`, `network`, `payer`), on " +
      `${answer} paid with X-PAYMENT that settled; ${PAYMENT_RECEIPT}. Never on a desk receipt.`
  )
})

/**
 * Response headers by the answer that carries them, which no schema can state: the edge's (src/Http/RateLimit.ts,
 * src/Http/Failures.ts) and x402's (src/Http/PaymentHeaders.ts). Spelled as agents read them.
 */
const HEADERS_OF: Record<string, Record<string, Json>> = {
  RateLimited: {
    "Retry-After": retryAfter("Seconds until one request is allowed again"),
    "RateLimit": {
      description: "Remaining requests and seconds until the full quota is back",
      schema: { type: "string" }
    },
    "RateLimit-Policy": { description: "The quota: requests per window in seconds", schema: { type: "string" } }
  },
  InternalError: {
    "X-Request-Id": { description: "The same value as requestId in the body", schema: { type: "string" } }
  },
  Unavailable: { "Retry-After": retryAfter(`Seconds to wait before retrying (${RETRY_AFTER_SECONDS})`) },
  SettlementUnavailable: { "Retry-After": SETTLEMENT_RETRY },
  SettlementPending: { "Retry-After": SETTLEMENT_RETRY },
  PaymentRequired: { "PAYMENT-REQUIRED": PAYMENT_REQUIRED },
  PaymentInvalid: { "PAYMENT-REQUIRED": PAYMENT_REQUIRED },
  UnlockResponse: paymentResponses("an unlock"),
  // A read of the body pays and reads at once, as x402 clients retry the request they were asked to pay for.
  SealedBody: paymentResponses("a body read")
}

/** Descriptions of one response's alternatives as one sentence: "A; or b" (a leading code or acronym kept as is). */
const eitherOf = (descriptions: ReadonlyArray<string>) =>
  descriptions.map((text, index) =>
    index === 0 ? text : text.replace(/^[A-Z](?=[a-z ])/, (first) => first.toLowerCase())
  )
    .join("; or ")

/** `code`: description, from an error component's `error` literal and its description. */
const describeError = (spec: Spec, name: string): string | undefined => {
  const component = spec.components.schemas[name]
  const code = component?.properties?.error?.enum?.[0]
  return code === undefined ? component?.description : `\`${code}\`: ${component.description}`
}

/** Every route that reads the database can answer its outage: a 503 `unavailable`, beside any other 503. */
const addDatabaseOutage = (spec: Spec, path: string, operation: Json) => {
  if (!readsDatabase(path)) return
  const unavailable = schemaRef(spec, Unavailable)
  const response = operation.responses["503"]
  const media = response?.content?.["application/json"]
  if (media === undefined) {
    operation.responses["503"] = { description: "", content: { "application/json": { schema: unavailable } } }
    return
  }
  const members = membersOf(media.schema)
  if (members.some((member) => refName(member) === refName(unavailable))) return
  media.schema = { anyOf: [...members, unavailable] }
}

/** Drops the error envelopes this operation can never send, and describes each remaining status by its codes. */
const pruneResponses = (spec: Spec, method: string, path: string, operation: Json) => {
  const readsQuery = (operation.parameters ?? []).some((parameter: Json) => parameter.in === "query")
  const dropped = (name: string) =>
    NEVER_SENT.has(name) ||
    (BODY_ERRORS.has(name) && !readsBody(method)) ||
    (QUERY_ERRORS.has(name) && (readsBody(method) || !readsQuery)) ||
    (name === "InvalidJson" && speaksJsonRpc(method, path)) ||
    (RATE_ERRORS.has(name) && !isRateLimited(method, path)) ||
    (DATABASE_ERRORS.has(name) && !readsDatabase(path))
  for (const [status, response] of Object.entries<Json>(operation.responses)) {
    const media = response.content?.["application/json"]
    if (Number(status) < 400 || media === undefined) continue
    const kept = membersOf(media.schema).filter((member) => {
      const name = refName(member)
      return name === undefined || !dropped(name)
    })
    if (kept.length === 0) {
      delete operation.responses[status]
      continue
    }
    media.schema = kept.length === 1 ? kept[0] : { anyOf: kept }
    const descriptions = kept.map((member) => refName(member)).flatMap((name) =>
      name === undefined ? [] : [describeError(spec, name) ?? name]
    )
    if (descriptions.length > 0) response.description = eitherOf(descriptions)
  }
}

/** Each response declares the headers its answers carry (HEADERS_OF); one named by two answers describes both. */
const declareHeaders = (operation: Json) => {
  for (const response of Object.values<Json>(operation.responses)) {
    const headers: Record<string, Json> = {}
    for (const member of membersOf(response.content?.["application/json"]?.schema)) {
      for (const [name, header] of Object.entries(HEADERS_OF[refName(member) ?? ""] ?? {})) {
        const known = headers[name]
        headers[name] = known === undefined || known.description === header.description
          ? header
          : { ...known, description: eitherOf([known.description, header.description]) }
      }
    }
    if (Object.keys(headers).length > 0) response.headers = headers
  }
}

/** A success described by its schema's name ("UnlockResponse") says nothing; the operation's summary does. */
const describeSuccess = (spec: Spec, operation: Json) => {
  for (const [status, response] of Object.entries<Json>(operation.responses)) {
    const generic = response.description === "Success" || spec.components.schemas[response.description] !== undefined
    if (Number(status) < 300 && generic && operation.summary !== undefined) response.description = operation.summary
  }
}

/**
 * Header names as agents read them in the spec: a header schema's keys are lowercase, as Node hands them over.
 * (X-AGENT-ID where it is required is the `agentId` security scheme of src/Identity/AgentAuth.ts, spelled right.)
 */
const fixHeaders = (operation: Json) => {
  for (const parameter of operation.parameters as Array<Json>) {
    if (parameter.in === "header") parameter.name = HEADER_NAMES[parameter.name] ?? parameter.name
  }
}

/**
 * Where X-AGENT-ID is optional (the OptionalAgent middleware: reading a body, MCP), the `agentId` scheme applies
 * as an alternative to none: a middleware without a security scheme leaves the operation's security empty.
 */
const optionalIdentity = (operation: Json) => {
  const named = (operation.parameters as Array<Json>).some((_) => _.in === "header" && _.name === "X-AGENT-ID")
  if (named && (operation.security === undefined || operation.security.length === 0)) {
    operation.security = [{}, { agentId: [] }]
  }
}

const refsIn = (value: Json, found: Set<string>) => {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, found)
  } else if (value !== null && typeof value === "object") {
    const name = refName(value)
    if (name !== undefined) found.add(name)
    for (const item of Object.values(value)) refsIn(item, found)
  }
}

/**
 * effect's JSON Schema marks Schema.Unknown as `{ "$id": "/schemas/unknown" }`; the same `$id` in several
 * places is an error to a JSON Schema validator, and an unconstrained schema means the same without it.
 */
const dropPlaceholderIds = (value: Json): void => {
  if (Array.isArray(value)) value.forEach(dropPlaceholderIds)
  else if (value !== null && typeof value === "object") {
    if (typeof value.$id === "string" && value.$id.startsWith("/schemas/")) delete value.$id
    Object.values(value).forEach(dropPlaceholderIds)
  }
}

/** Effect's titles for its own schemas (`int`, `unknown`, `maxItems(20)`): the kind, not a name anyone gave. */
const EFFECT_TITLE = /^[a-z][A-Za-z0-9]*(\(.*\))?$/
/** Values, not schemas: a `title` member there is data. */
const DATA_KEYWORDS = new Set(["example", "examples", "default", "const", "enum"])
/** Schemas by name: a member named `example` there is a schema. */
const NAMED_SCHEMAS = new Set(["properties", "patternProperties", "$defs", "schemas"])

/** Drops the titles effect's JSON Schema copies from its built-in schemas' annotations; other titles stay. */
const dropEffectTitles = (value: Json): void => {
  if (Array.isArray(value)) value.forEach(dropEffectTitles)
  else if (value !== null && typeof value === "object") {
    if (typeof value.title === "string" && EFFECT_TITLE.test(value.title)) delete value.title
    for (const [key, member] of Object.entries<Json>(value)) {
      if (NAMED_SCHEMAS.has(key) && member !== null && typeof member === "object") {
        Object.values(member).forEach(dropEffectTitles)
      } else if (!DATA_KEYWORDS.has(key)) dropEffectTitles(member)
    }
  }
}

/** Components no operation reaches, directly or through other components, are dropped. */
const pruneComponents = (spec: Spec) => {
  const reached = new Set<string>()
  refsIn(spec.paths, reached)
  let frontier = [...reached]
  while (frontier.length > 0) {
    const next = new Set<string>()
    for (const name of frontier) refsIn(spec.components.schemas[name], next)
    frontier = [...next].filter((name) => !reached.has(name))
    for (const name of frontier) reached.add(name)
  }
  for (const name of Object.keys(spec.components.schemas)) {
    if (!reached.has(name)) delete spec.components.schemas[name]
  }
}

/**
 * The document as the desk really answers. Each patch exists because the generator cannot state it:
 * - the serve-level errors (invalid JSON, too large, wrong media type, rate limited, internal) are raised by the
 *   edge before routing, by the method and path rules of src/Desk/RequestRules.ts; they are declared once on the
 *   API and pruned here by those same rules, rather than restated on each endpoint where they could drift;
 * - a database outage (503 `unavailable`) is stated on every route that reads the database, by the rule of the
 *   same file, and only there;
 * - the platform's own decode error is never sent (src/Http/Failures.ts answers with the desk's 422 envelope);
 * - header names are spelled as agents read them (a header schema's keys are lowercase), and the response headers
 *   no schema carries (Retry-After, the rate limit, x402's PAYMENT-REQUIRED and PAYMENT-RESPONSE) are declared;
 * - where X-AGENT-ID is optional, its security scheme is stated as optional (`[{}, {agentId: []}]`);
 * - effect's titles for its built-in schemas (`int`, `unknown`) say nothing and are dropped;
 * - the two 405-only routes beside the API (BesideApi.ts) have no endpoint to describe them.
 */
export const asServed = (generated: Spec): Spec => {
  const spec: Spec = structuredClone(generated)
  addBesideRoutes(spec)
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      addDatabaseOutage(spec, path, operation)
      pruneResponses(spec, method.toUpperCase(), path, operation)
      declareHeaders(operation)
      fixHeaders(operation)
      optionalIdentity(operation)
      describeSuccess(spec, operation)
    }
  }
  pruneComponents(spec)
  dropPlaceholderIds(spec)
  dropEffectTitles(spec.paths)
  dropEffectTitles(spec.components)
  spec.info.description = [
    spec.info.description,
    "Standing order:",
    ...STANDING_ORDER.map((line) => `- ${line}`)
  ].join("\n")
  return spec
}
