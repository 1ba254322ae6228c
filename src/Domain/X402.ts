import { Schema } from "effect"
import { PaymentRequirementsV1 } from "./Errors.ts"

const Address = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{40}$/))
const Bytes32 = Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]{64}$/))
const HexData = Schema.String.pipe(Schema.pattern(/^0x(?:[0-9a-fA-F]{2})+$/))
const Uint256 = Schema.String.pipe(Schema.pattern(/^(?:0|[1-9][0-9]{0,77})$/))

/** The EIP-3009 `transferWithAuthorization` message the buyer signed. */
export const Authorization = Schema.Struct({
  from: Address,
  to: Address,
  value: Uint256,
  validAfter: Uint256,
  validBefore: Uint256,
  nonce: Bytes32
})
export type Authorization = typeof Authorization.Type

export const ExactEvmPayload = Schema.Struct({ signature: HexData, authorization: Authorization })

export const PaymentRequirementsV2 = Schema.Struct({
  scheme: Schema.String,
  network: Schema.String,
  amount: Schema.String,
  asset: Schema.String,
  payTo: Schema.String,
  maxTimeoutSeconds: Schema.Int,
  extra: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type PaymentRequirementsV2 = typeof PaymentRequirementsV2.Type

export const ResourceInfo = Schema.Struct({ url: Schema.String, description: Schema.String, mimeType: Schema.String })

/** The base64 JSON of an `X-PAYMENT` header (x402 v1). */
export const PaymentPayloadV1 = Schema.Struct({
  x402Version: Schema.Literal(1),
  scheme: Schema.String,
  network: Schema.String,
  payload: ExactEvmPayload
})
export type PaymentPayloadV1 = typeof PaymentPayloadV1.Type

/** The base64 JSON of a `PAYMENT-SIGNATURE` header (x402 v2): `accepted` echoes one of the challenge's requirements. */
export const PaymentPayloadV2 = Schema.Struct({
  x402Version: Schema.Literal(2),
  resource: Schema.optional(ResourceInfo),
  accepted: PaymentRequirementsV2,
  payload: ExactEvmPayload,
  extensions: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type PaymentPayloadV2 = typeof PaymentPayloadV2.Type

/** A payment with the desk's own requirements it was verified against; stored with its claim to settle later. */
export const VerifiablePayment = Schema.Union(
  Schema.Struct({ x402Version: Schema.Literal(1), payload: PaymentPayloadV1, requirements: PaymentRequirementsV1 }),
  Schema.Struct({ x402Version: Schema.Literal(2), payload: PaymentPayloadV2, requirements: PaymentRequirementsV2 })
)
export type VerifiablePayment = typeof VerifiablePayment.Type

export const PaymentRequiredV2 = Schema.Struct({
  x402Version: Schema.Literal(2),
  error: Schema.optional(Schema.String),
  resource: ResourceInfo,
  accepts: Schema.Array(PaymentRequirementsV2),
  extensions: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
})
export type PaymentRequiredV2 = typeof PaymentRequiredV2.Type
