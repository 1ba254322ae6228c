import { Schema } from "effect"

export const SandboxStep = Schema.Struct({
  method: Schema.Literal("GET", "POST"),
  url: Schema.String.annotations({
    description: "Path on this desk: resolve it against the URL you fetched the sandbox from"
  }),
  pay: Schema.Boolean.annotations({ description: "Whether this step needs a payment; false on every sandbox step" }),
  headers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  body: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.String }).annotations({
      description: "Send as the JSON request body"
    })
  ),
  use: Schema.optional(Schema.String.annotations({ description: "What to look at in the response" }))
}).annotations({ identifier: "SandboxStep" })

export const SandboxResponse = Schema.Struct({
  name: Schema.String,
  free: Schema.Literal(true),
  usdcRequired: Schema.Literal(false),
  stage: Schema.String,
  note: Schema.String,
  agentId: Schema.String.annotations({
    description: "A fresh identity made for this sandbox run and used in the steps; use your own if you have one"
  }),
  handoffId: Schema.String.annotations({ description: "The demo packet the loop unlocks" }),
  steps: Schema.Array(SandboxStep),
  spendControl: Schema.Struct({
    header: Schema.Literal("X-AGENT-ID"),
    defaultCapUsd: Schema.Number,
    raise: Schema.String
  })
}).annotations({ identifier: "SandboxResponse" })
export type SandboxResponse = typeof SandboxResponse.Type
