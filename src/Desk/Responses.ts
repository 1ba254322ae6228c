import { Schema } from "effect"
import type { SignerKey } from "../ReceiptSigning.ts"

export const ReceiptSigner = Schema.Struct({
  kid: Schema.String.annotations({ description: "did:pkh:eip155:<chain id>:<address> (EIP-712) or did:jwk:... (JWS)" }),
  format: Schema.Literal("eip712", "jws"),
  address: Schema.NullOr(Schema.String).annotations({ description: "EIP-712: the signing wallet" }),
  jwksUrl: Schema.NullOr(Schema.String).annotations({ description: "JWS: where the public key is published" })
}).annotations({ identifier: "ReceiptSigner" })

/** The signer as published: the key's id and format, and where to find the key itself. */
export const publishedSigner = (key: SignerKey, publicUrl: string): typeof ReceiptSigner.Type => ({
  kid: key.kid,
  format: key.format,
  address: key.address,
  jwksUrl: key.format === "jws" ? `${publicUrl}/.well-known/jwks.json` : null
})

export const StatusResponse = Schema.Struct({
  ok: Schema.Boolean,
  site: Schema.String,
  stage: Schema.String,
  network: Schema.String,
  label: Schema.String,
  asset: Schema.Literal("USDC"),
  assetAddress: Schema.NullOr(Schema.String),
  eip712: Schema.NullOr(Schema.Struct({ name: Schema.String, version: Schema.String })),
  payTo: Schema.NullOr(Schema.String),
  x402Ready: Schema.Boolean,
  deskFallback: Schema.Boolean,
  required: Schema.Boolean,
  facilitatorKind: Schema.String,
  facilitatorReachable: Schema.Boolean,
  note: Schema.String,
  payout: Schema.Struct({
    enabled: Schema.Boolean,
    configured: Schema.Boolean,
    ethersInstalled: Schema.Boolean,
    note: Schema.String
  }),
  receiptSigner: Schema.NullOr(ReceiptSigner).annotations({
    description: "The key that signs offers (in 402 challenges) and receipts (x402 offer-receipt); null when the " +
      "desk signs nothing"
  }),
  forAgents: Schema.Record({ key: Schema.String, value: Schema.String })
}).annotations({ identifier: "StatusResponse" })

/** GET /.well-known/jwks.json: the public key of JWS-signed offers and receipts (empty when none is JWS). */
export const JwksResponse = Schema.Struct({
  keys: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.String }))
}).annotations({ identifier: "Jwks" })

export const HealthResponse = Schema.Struct({
  ok: Schema.Literal(true),
  status: Schema.Literal("ok"),
  database: Schema.Struct({ ok: Schema.Boolean, kind: Schema.String, latencyMs: Schema.Number }),
  rail: Schema.Struct({
    network: Schema.String,
    x402Ready: Schema.Boolean,
    facilitatorKind: Schema.String,
    facilitatorReachable: Schema.Boolean.annotations({
      description: "Whether the chain (or hosted facilitator) answered its last probe (at most one every 5 s), as " +
        "in GET /api/status; false on a desk without a chain. A paid unlock meanwhile is 503 settlement_unavailable"
    })
  }),
  uptimeSeconds: Schema.Number,
  version: Schema.String
}).annotations({ identifier: "HealthResponse" })

export const SurfaceResponse = Schema.Struct({
  name: Schema.String,
  site: Schema.String,
  standingOrder: Schema.Array(Schema.String),
  identity: Schema.Struct({
    header: Schema.String,
    paymentHeader: Schema.String,
    format: Schema.String,
    unique: Schema.Literal(false),
    note: Schema.String
  }),
  settlement: Schema.Struct({
    buyerPays: Schema.String,
    filerSharePct: Schema.Number,
    deskFeePct: Schema.Number,
    websitePay: Schema.String,
    xPayment: Schema.String,
    filerPayout: Schema.String,
    stage: Schema.String,
    network: Schema.String,
    receiptExplorerFields: Schema.Array(Schema.String)
  }),
  start: Schema.Array(Schema.Struct({ method: Schema.String, path: Schema.String })),
  routes: Schema.Array(Schema.String)
}).annotations({ identifier: "SurfaceResponse" })
