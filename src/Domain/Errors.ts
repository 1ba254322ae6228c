import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/** Every failure on the wire is `{ ok: false, error: <code>, message }`; the class tag stays in memory only. */
const envelope = <Code extends string>(code: Code) => ({
  ok: Schema.Literal(false).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => false as const)),
  error: Schema.Literal(code).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => code)),
  message: Schema.String
})

export const Issue = Schema.Struct({
  path: Schema.String,
  message: Schema.String
}).annotations({ identifier: "Issue" })
export type Issue = typeof Issue.Type

const status = (code: number, description: string) => ({ description, [HttpApiSchema.AnnotationStatus]: code })

export class NotFound extends Schema.Class<NotFound>("NotFound")(
  envelope("not_found"),
  status(404, "No such handoff, agent or route")
) {
  readonly _tag = "NotFound"
}

export class AgentIdRequired extends Schema.Class<AgentIdRequired>("AgentIdRequired")(
  envelope("agent_id_required"),
  status(401, "The X-AGENT-ID header is missing")
) {
  readonly _tag = "AgentIdRequired"
}

export class InvalidAgentId extends Schema.Class<InvalidAgentId>("InvalidAgentId")(
  envelope("invalid_agent_id"),
  status(400, "The X-AGENT-ID header is not did:desk: + 32 lowercase hex characters")
) {
  readonly _tag = "InvalidAgentId"
}

export class InvalidHandoff extends Schema.Class<InvalidHandoff>("InvalidHandoff")(
  { ...envelope("invalid_handoff"), issues: Schema.Array(Issue) },
  status(422, "The filing breaks a rule; `issues` names each field and rule")
) {
  readonly _tag = "InvalidHandoff"
}

export class InvalidQuery extends Schema.Class<InvalidQuery>("InvalidQuery")(
  { ...envelope("invalid_query"), issues: Schema.Array(Issue) },
  status(422, "A query parameter is invalid; `issues` names it")
) {
  readonly _tag = "InvalidQuery"
}

export class InvalidRequest extends Schema.Class<InvalidRequest>("InvalidRequest")(
  { ...envelope("invalid_request"), issues: Schema.Array(Issue) },
  status(422, "The JSON body breaks a rule; `issues` names each field")
) {
  readonly _tag = "InvalidRequest"
}

export class InvalidJson extends Schema.Class<InvalidJson>("InvalidJson")(
  envelope("invalid_json"),
  status(400, "The request body is not valid JSON")
) {
  readonly _tag = "InvalidJson"
}

export class UnsupportedMediaType extends Schema.Class<UnsupportedMediaType>("UnsupportedMediaType")(
  envelope("unsupported_media_type"),
  status(415, "The request body must be sent as application/json")
) {
  readonly _tag = "UnsupportedMediaType"
}

export class PayloadTooLarge extends Schema.Class<PayloadTooLarge>("PayloadTooLarge")(
  envelope("payload_too_large"),
  status(413, "The request body is over 1 MiB")
) {
  readonly _tag = "PayloadTooLarge"
}

export class Unavailable extends Schema.Class<Unavailable>("Unavailable")(
  envelope("unavailable"),
  status(503, "The database is unreachable; retry after the Retry-After seconds")
) {
  readonly _tag = "Unavailable"
}

export class InternalError extends Schema.Class<InternalError>("InternalError")(
  { ...envelope("internal_error"), requestId: Schema.String },
  status(500, "An unexpected fault; quote requestId when reporting it")
) {
  readonly _tag = "InternalError"
}
