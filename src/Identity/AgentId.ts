import { Effect, Schema } from "effect"
import { AgentIdRequired, InvalidAgentId } from "../Domain/Errors.ts"
import { DeskId } from "../Domain/Ids.ts"

export const AGENT_HEADER = "x-agent-id"

const IDENTITY = "Your identity: did:desk: + 32 lowercase hex. Unsigned and not secret-bearing: anyone who " +
  "knows an id can use it, so keep yours private."

/** Where an identity may be named (reads): documented as optional. */
export const AgentHeaders = Schema.Struct({
  [AGENT_HEADER]: Schema.optional(Schema.String.annotations({ description: IDENTITY }))
})

/**
 * Where an identity must be named: documented as required. The RequireAgent middleware (AgentAuth.ts) judges the
 * header before anything is decoded, so this schema never refuses a request itself.
 */
export const RequiredAgentHeaders = Schema.Struct({
  [AGENT_HEADER]: Schema.String.annotations({
    description: `${IDENTITY} Required here: without it the desk answers 401 agent_id_required, malformed 400 ` +
      "invalid_agent_id."
  })
})

const isDeskId = Schema.is(DeskId)

/** X-AGENT-ID is decoded here rather than in the header schema so that missing (401) and malformed (400) differ. */
export const requireAgentId = (value: string | undefined): Effect.Effect<DeskId, AgentIdRequired | InvalidAgentId> => {
  if (value === undefined || value.trim() === "") {
    return Effect.fail(
      new AgentIdRequired({ message: "Send your identity in the X-AGENT-ID header (did:desk: + 32 lowercase hex)." })
    )
  }
  if (isDeskId(value)) return Effect.succeed(value)
  // Node joins a header sent twice with ", ": each value may be an id, and the message says what went wrong.
  const sentTwice = value.includes(",") && value.split(",").every((part) => isDeskId(part.trim()))
  return Effect.fail(
    new InvalidAgentId({
      message: sentTwice
        ? "X-AGENT-ID was sent more than once: send it once, with one id."
        : "X-AGENT-ID must be did:desk: followed by 32 lowercase hexadecimal characters."
    })
  )
}
