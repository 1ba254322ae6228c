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
}).annotations({ identifier: "FieldIssue" })
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

/**
 * What Node refuses before the desk reads a request (src/Http/NodeServer.ts): a request that is no HTTP/1.1, its
 * headers too large or too slow, an Expect it cannot meet. Any route can answer them.
 */
export class BadRequest extends Schema.Class<BadRequest>("BadRequest")(
  envelope("bad_request"),
  status(400, "The request is not well-formed HTTP/1.1 (an HTTP/1.1 request without Host, say)")
) {
  readonly _tag = "BadRequest"
}

export class RequestTimeout extends Schema.Class<RequestTimeout>("RequestTimeout")(
  envelope("request_timeout"),
  status(408, "The request was not received in time (its headers within 10 seconds); send it again in one go")
) {
  readonly _tag = "RequestTimeout"
}

export class ExpectationFailed extends Schema.Class<ExpectationFailed>("ExpectationFailed")(
  envelope("expectation_failed"),
  status(417, "The request carries an Expect header other than 100-continue")
) {
  readonly _tag = "ExpectationFailed"
}

export class HeadersTooLarge extends Schema.Class<HeadersTooLarge>("HeadersTooLarge")(
  envelope("headers_too_large"),
  status(431, "The request headers are over Node's limit (16 KiB)")
) {
  readonly _tag = "HeadersTooLarge"
}

export class MethodNotAllowed extends Schema.Class<MethodNotAllowed>("MethodNotAllowed")(
  envelope("method_not_allowed"),
  status(405, "This path does not answer this HTTP method; the Allow header lists the ones it does")
) {
  readonly _tag = "MethodNotAllowed"
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

export class RateLimited extends Schema.Class<RateLimited>("RateLimited")(
  envelope("rate_limited"),
  status(429, "Too many requests from this address; retry after the Retry-After seconds")
) {
  readonly _tag = "RateLimited"
}

export class Unavailable extends Schema.Class<Unavailable>("Unavailable")(
  envelope("unavailable"),
  status(
    503,
    "The database is unreachable, or the desk is busy with another deep page; retry after the Retry-After seconds"
  )
) {
  readonly _tag = "Unavailable"
}

export class InternalError extends Schema.Class<InternalError>("InternalError")(
  { ...envelope("internal_error"), requestId: Schema.String },
  status(500, "An unexpected fault; quote requestId when reporting it")
) {
  readonly _tag = "InternalError"
}

export class SpendCapExceeded extends Schema.Class<SpendCapExceeded>("SpendCapExceeded")(
  { ...envelope("spend_cap_exceeded"), spendCapUsd: Schema.Number, spentUsd: Schema.Number, priceUsd: Schema.Number },
  status(
    403,
    "The unlock would take your total spend over your spendCapUsd; raise it with POST /api/agents (your X-AGENT-ID)"
  )
) {
  readonly _tag = "SpendCapExceeded"
}

export class NotUnlocked extends Schema.Class<NotUnlocked>("NotUnlocked")(
  envelope("not_unlocked"),
  status(403, "Only an identity that unlocked the handoff may do this")
) {
  readonly _tag = "NotUnlocked"
}

export class PayoutChangeRefused extends Schema.Class<PayoutChangeRefused>("PayoutChangeRefused")(
  envelope("payout_change_requires_signature"),
  status(403, "Changing a registered payoutAddress needs an EIP-191 signature by the current payout address")
) {
  readonly _tag = "PayoutChangeRefused"
}

/** The x402 payment challenge members ride along with the error envelope on every 402. */
export const PaymentRequirementsV1 = Schema.Struct({
  scheme: Schema.String,
  network: Schema.String,
  maxAmountRequired: Schema.String,
  resource: Schema.String,
  description: Schema.String,
  mimeType: Schema.String,
  payTo: Schema.String,
  maxTimeoutSeconds: Schema.Int,
  asset: Schema.String,
  extra: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  outputSchema: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })).annotations({
    description: "x402 Bazaar discovery (v1 form): how to call the unlock and what it answers"
  })
}).annotations({ identifier: "PaymentRequirements" })
export type PaymentRequirementsV1 = typeof PaymentRequirementsV1.Type

export class PaymentRequired extends Schema.Class<PaymentRequired>("PaymentRequired")(
  {
    ...envelope("payment_required"),
    x402Version: Schema.Literal(1),
    accepts: Schema.Array(PaymentRequirementsV1),
    error_detail: Schema.optional(Schema.String)
  },
  status(402, "Unlock first (POST /api/handoffs/:id/unlock); `accepts` lists the on-chain payment options, if any")
) {
  readonly _tag = "PaymentRequired"
}

/**
 * x402 answers a refused payment with a fresh challenge: a 402 whose `reason` says why (the facilitator's
 * reason code, or the desk's own check), so a client can sign again or give up. Nothing was charged.
 */
/**
 * A `SIGN-IN-WITH-X` proof that reads no body: malformed, for another origin or resource, expired, signed by
 * another address, used before, or from a wallet that bought nothing here. `reason` is stable.
 */
export class SignInRefused extends Schema.Class<SignInRefused>("SignInRefused")(
  { ...envelope("siwx_refused"), reason: Schema.String },
  status(401, "The SIGN-IN-WITH-X proof was refused; `reason` says why (see docs/settlement.md)")
) {
  readonly _tag = "SignInRefused"
}

export class PaymentInvalid extends Schema.Class<PaymentInvalid>("PaymentInvalid")(
  {
    ...envelope("payment_invalid"),
    reason: Schema.String,
    x402Version: Schema.Literal(1).pipe(Schema.propertySignature, Schema.withConstructorDefault(() => 1 as const)),
    accepts: Schema.Array(PaymentRequirementsV1).pipe(
      Schema.propertySignature,
      Schema.withConstructorDefault((): ReadonlyArray<PaymentRequirementsV1> => [])
    )
  },
  status(402, "The X-PAYMENT (or PAYMENT-SIGNATURE) header was refused, `reason` says why; nothing was charged")
) {
  readonly _tag = "PaymentInvalid"
}

export class SettlementUnavailable extends Schema.Class<SettlementUnavailable>("SettlementUnavailable")(
  { ...envelope("settlement_unavailable"), retryAfterSeconds: Schema.Int },
  status(503, "The chain or the facilitator does not answer; nothing was charged, retry with the same payment")
) {
  readonly _tag = "SettlementUnavailable"
}

export class SettlementPending extends Schema.Class<SettlementPending>("SettlementPending")(
  { ...envelope("settlement_pending"), retryAfterSeconds: Schema.Int },
  status(202, "The payment is being confirmed on-chain; retry the same request with the same payment")
) {
  readonly _tag = "SettlementPending"
}

export class AgentMismatch extends Schema.Class<AgentMismatch>("AgentMismatch")(
  envelope("agent_mismatch"),
  status(403, "X-AGENT-ID is another identity than the one the request changes; an agent changes only its own settings")
) {
  readonly _tag = "AgentMismatch"
}

export class DuplicateBody extends Schema.Class<DuplicateBody>("DuplicateBody")(
  {
    ...envelope("duplicate_body"),
    duplicateOf: Schema.NullOr(Schema.String).annotations({
      description: "The listed handoff with the same body (DESK-12), EXAMPLE for the free example and demo packet, " +
        "or null while another desk's filing of it is not yet committed"
    })
  },
  status(
    409,
    "The body (trimmed, line endings unified) is already listed, or is the free example's: file your own work"
  )
) {
  readonly _tag = "DuplicateBody"
}
