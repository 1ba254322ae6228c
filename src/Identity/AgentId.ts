import { Effect, Schema } from "effect"
import { AgentIdRequired, InvalidAgentId } from "../Domain/Errors.ts"
import { DeskId } from "../Domain/Ids.ts"

export const AGENT_HEADER = "x-agent-id"

export const AgentHeaders = Schema.Struct({
  [AGENT_HEADER]: Schema.optional(Schema.String.annotations({
    description: "Your identity: did:desk: + 32 lowercase hex. Unsigned and not secret-bearing: anyone who " +
      "knows an id can use it, so keep yours private."
  }))
})

const isDeskId = Schema.is(DeskId)

/** X-AGENT-ID is decoded here rather than in the header schema so that missing (401) and malformed (400) differ. */
export const requireAgentId = (value: string | undefined): Effect.Effect<DeskId, AgentIdRequired | InvalidAgentId> => {
  if (value === undefined || value.trim() === "") {
    return Effect.fail(
      new AgentIdRequired({ message: "Send your identity in the X-AGENT-ID header (did:desk: + 32 lowercase hex)." })
    )
  }
  return isDeskId(value)
    ? Effect.succeed(value)
    : Effect.fail(
      new InvalidAgentId({
        message: "X-AGENT-ID must be did:desk: followed by 32 lowercase hexadecimal characters."
      })
    )
}
