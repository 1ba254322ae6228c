import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest, OpenApi } from "@effect/platform"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { AgentIdRequired, InvalidAgentId } from "../Domain/Errors.ts"
import type { DeskId } from "../Domain/Ids.ts"
import { AGENT_HEADER, requireAgentId } from "./AgentId.ts"

/** The identity that sent this request (X-AGENT-ID), judged before its body is read. */
export class CurrentAgent extends Context.Tag("CurrentAgent")<CurrentAgent, DeskId>() {}

/** The identity that sent this request, when it named one. */
export class CallingAgent extends Context.Tag("CallingAgent")<CallingAgent, Option.Option<DeskId>>() {}

const agentId = HttpApiSecurity.apiKey({ in: "header", key: "X-AGENT-ID" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "Your identity: did:desk: + 32 lowercase hex. Unsigned and not secret-bearing: anyone who knows an id can " +
      "use it, so keep yours private. Missing: 401 agent_id_required; malformed: 400 invalid_agent_id."
  )
)

/** Routes that act as an identity: 401 `agent_id_required` without X-AGENT-ID, 400 `invalid_agent_id` when malformed. */
export class RequireAgent extends HttpApiMiddleware.Tag<RequireAgent>()("RequireAgent", {
  failure: Schema.Union(AgentIdRequired, InvalidAgentId),
  provides: CurrentAgent,
  security: { agentId }
}) {}

/**
 * Routes an identity may read as, or not: a missing or blank X-AGENT-ID names none, a malformed one is a 400
 * `invalid_agent_id`. A request that signs in with its wallet (SIGN-IN-WITH-X) reads as the wallet, not an id.
 */
export class OptionalAgent extends HttpApiMiddleware.Tag<OptionalAgent>()("OptionalAgent", {
  failure: InvalidAgentId,
  provides: CallingAgent
}) {}

export const RequireAgentLive = Layer.succeed(
  RequireAgent,
  RequireAgent.of({ agentId: (key) => requireAgentId(Redacted.value(key)) })
)

export const OptionalAgentLive = Layer.succeed(
  OptionalAgent,
  Effect.gen(function*() {
    const { headers } = yield* HttpServerRequest.HttpServerRequest
    const header = headers[AGENT_HEADER]
    const signsIn = (headers["sign-in-with-x"] ?? "").trim() !== ""
    if (signsIn || header === undefined || header.trim() === "") return Option.none()
    // Not blank, so never the 401: only the 400 can come out.
    return Option.some(yield* Effect.catchTag(requireAgentId(header), "AgentIdRequired", Effect.die))
  })
)
