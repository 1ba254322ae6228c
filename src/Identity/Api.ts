import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AgentRegistration, AgentView } from "../Domain/Agent.ts"
import { AgentMismatch, InvalidRequest, NotFound, PayoutChangeRefused } from "../Domain/Errors.ts"
import { RequireAgent } from "./AgentAuth.ts"
import { RequiredAgentHeaders } from "./AgentId.ts"

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("register", "/api/agents")
      .middleware(RequireAgent)
      .setHeaders(RequiredAgentHeaders)
      .setPayload(AgentRegistration)
      .addSuccess(AgentView)
      .addError(InvalidRequest)
      .addError(AgentMismatch)
      .addError(PayoutChangeRefused)
      .annotate(OpenApi.Summary, "Register an id, set its payoutAddress and/or its spendCapUsd")
      .annotate(
        OpenApi.Description,
        "X-AGENT-ID is required and must equal id: an agent registers and changes only its own settings. The first " +
          "payoutAddress is set freely; changing it needs an EIP-191 signature by the current payout address (see " +
          "payoutChangeRule). A payoutAddress must be able to receive: not the zero address, the USDC contract or the " +
          "desk's payTo. spendCapUsd may be raised (ask your owner) or lowered down to what was spent."
      )
  )
  .add(
    HttpApiEndpoint.get("agent", "/api/agents/:id")
      .setPath(
        Schema.Struct({ id: Schema.String.annotations({ description: "Agent id: did:desk: + 32 lowercase hex" }) })
      )
      .addSuccess(AgentView)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Reputation of an agent id: earnings, payout address, spend cap")
  )
  .annotate(OpenApi.Title, "Agents")
{}
