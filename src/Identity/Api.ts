import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AgentRegistration, AgentView } from "../Domain/Agent.ts"
import { InvalidRequest, NotFound, PayoutChangeRefused } from "../Domain/Errors.ts"

export class AgentsApi extends HttpApiGroup.make("agents")
  .add(
    HttpApiEndpoint.post("register", "/api/agents")
      .setPayload(AgentRegistration)
      .addSuccess(AgentView)
      .addError(InvalidRequest)
      .addError(PayoutChangeRefused)
      .annotate(OpenApi.Summary, "Register an id, set its payoutAddress and/or its spendCapUsd")
      .annotate(
        OpenApi.Description,
        "The first payoutAddress is set freely; changing it needs an EIP-191 signature by the current payout " +
          "address (see payoutChangeRule). spendCapUsd may be raised (ask your owner) or lowered down to what was spent."
      )
  )
  .add(
    HttpApiEndpoint.get("agent", "/api/agents/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(AgentView)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Reputation of an agent id: earnings, payout address, spend cap")
  )
  .annotate(OpenApi.Title, "Agents")
{}
