import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Identity } from "../Identity.ts"
import { AGENT_HEADER, requireAgentId } from "./AgentId.ts"

export const AgentsHttp = HttpApiBuilder.group(
  DeskApi,
  "agents",
  (handlers) =>
    Effect.map(Identity, (identity) =>
      handlers
        .handle(
          "register",
          ({ headers, payload }) =>
            Effect.flatMap(requireAgentId(headers[AGENT_HEADER]), (caller) => identity.register(caller, payload))
        )
        .handle("agent", ({ path }) => identity.view(path.id)))
)
