import { isRateLimited, readsBody } from "../Desk/RequestRules.ts"
import { STANDING_ORDER } from "../Guide/StandingOrder.ts"
import { addBesideRoutes } from "./BesideApiOperations.ts"
import { type Json, membersOf, refName, type Spec } from "./OpenApiJson.ts"

const BODY_ERRORS = new Set(["InvalidJson", "PayloadTooLarge", "UnsupportedMediaType"])
const RATE_ERRORS = new Set(["RateLimited"])
/** The platform's own decode error: src/Http/Failures.ts answers every decode failure with a 422 envelope instead. */
const NEVER_SENT = new Set(["HttpApiDecodeError"])

const HEADER_NAMES: Record<string, string> = {
  "x-agent-id": "X-AGENT-ID",
  "x-payment": "X-PAYMENT",
  "payment-signature": "PAYMENT-SIGNATURE",
  "sign-in-with-x": "SIGN-IN-WITH-X"
}

const RESPONSE_HEADERS: Record<string, Record<string, Json>> = {
  "429": {
    "Retry-After": {
      description: "Seconds until one request is allowed again",
      schema: { type: "integer", minimum: 1 }
    },
    "RateLimit": {
      description: "Remaining requests and seconds until the full quota is back",
      schema: { type: "string" }
    },
    "RateLimit-Policy": { description: "The quota: requests per window in seconds", schema: { type: "string" } }
  },
  "500": {
    "X-Request-Id": { description: "The same value as requestId in the body", schema: { type: "string" } }
  }
}

/** `code`: description, from an error component's `error` literal and its description. */
const describeError = (spec: Spec, name: string): string | undefined => {
  const component = spec.components.schemas[name]
  const code = component?.properties?.error?.enum?.[0]
  return code === undefined ? component?.description : `\`${code}\`: ${component.description}`
}

/** Drops the error envelopes this operation can never send, and describes each remaining status by its codes. */
const pruneResponses = (spec: Spec, method: string, path: string, operation: Json) => {
  const dropped = (name: string) =>
    NEVER_SENT.has(name) ||
    (BODY_ERRORS.has(name) && !readsBody(method)) ||
    (RATE_ERRORS.has(name) && !isRateLimited(method, path))
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
    if (descriptions.length > 0) response.description = descriptions.join(" Or ")
    if (RESPONSE_HEADERS[status] !== undefined) response.headers = RESPONSE_HEADERS[status]
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
 * - the platform's own decode error is never sent (src/Http/Failures.ts answers with the desk's 422 envelope);
 * - header names are spelled as agents read them (a header schema's keys are lowercase);
 * - the two 405-only routes beside the API (BesideApi.ts) have no endpoint to describe them.
 */
export const asServed = (generated: Spec): Spec => {
  const spec: Spec = structuredClone(generated)
  addBesideRoutes(spec)
  for (const [path, item] of Object.entries<Json>(spec.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      pruneResponses(spec, method.toUpperCase(), path, operation)
      fixHeaders(operation)
      describeSuccess(spec, operation)
    }
  }
  pruneComponents(spec)
  dropPlaceholderIds(spec)
  spec.info.description = [
    spec.info.description,
    "Standing order:",
    ...STANDING_ORDER.map((line) => `- ${line}`)
  ].join("\n")
  return spec
}
