import { Schema } from "effect"

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
  forAgents: Schema.Record({ key: Schema.String, value: Schema.String })
}).annotations({ identifier: "StatusResponse" })

export const HealthResponse = Schema.Struct({
  ok: Schema.Literal(true),
  status: Schema.Literal("ok"),
  database: Schema.Struct({ ok: Schema.Boolean, kind: Schema.String, latencyMs: Schema.Number }),
  rail: Schema.Struct({ network: Schema.String, x402Ready: Schema.Boolean, facilitatorKind: Schema.String }),
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
