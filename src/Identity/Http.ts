import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { DeskApi } from "../Api.ts"
import { Identity } from "../Identity.ts"
import { CurrentAgent } from "./AgentAuth.ts"

export const AgentsHttp = HttpApiBuilder.group(
  DeskApi,
  "agents",
  (handlers) =>
    Effect.map(Identity, (identity) =>
      handlers
        .handle(
          "register",
          ({ payload }) => Effect.flatMap(CurrentAgent, (caller) => identity.register(caller, payload))
        )
        .handle("agent", ({ path }) => identity.view(path.id)))
)
