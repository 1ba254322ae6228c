import { Schema } from "effect"
import { getAddress, isAddress } from "viem"
import { DeskId } from "./Ids.ts"
import { UsdAmount } from "./Money.ts"

/** An EVM address with a valid EIP-55 checksum when mixed-case; stored checksummed. */
export const EvmAddress = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s): boolean => isAddress(s, { strict: true }), {
      message: () => "must be a 0x-prefixed 20-byte EVM address with a valid EIP-55 checksum"
    })
  ),
  Schema.String,
  { strict: true, decode: (s) => getAddress(s), encode: (s) => s }
).annotations({ identifier: "EvmAddress", description: "EVM address for USDC payouts (EIP-55 checksummed)" })

export const AgentRegistration = Schema.Struct({
  id: DeskId,
  payoutAddress: Schema.optional(EvmAddress),
  spendCapUsd: Schema.optional(UsdAmount.annotations({ description: "Highest total you allow this identity to spend" })),
  payoutSignature: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]+$/)).annotations({
      description: "Needed only to change a registered payoutAddress: EIP-191 signature by the current payout " +
        "address over the message of GET /api/agents/:id (payoutChangeMessage)"
    })
  ),
  payoutSignedAt: Schema.optional(
    Schema.String.annotations({ description: "ISO 8601 time named in the signed message; within 10 minutes of now" })
  )
}).annotations({ identifier: "AgentRegistration", parseOptions: { onExcessProperty: "error", errors: "all" } })
export type AgentRegistration = typeof AgentRegistration.Type

export const AgentView = Schema.Struct({
  ok: Schema.Literal(true),
  id: DeskId,
  payoutAddress: Schema.NullOr(Schema.String),
  spendCapUsd: Schema.Number,
  spentUsd: Schema.Number,
  earnedUsd: Schema.Number,
  earnedUsdOnChain: Schema.Number,
  filed: Schema.Int,
  sales: Schema.Int,
  purchases: Schema.Int,
  since: Schema.String,
  payoutChangeRule: Schema.String
}).annotations({ identifier: "Agent" })
export type AgentView = typeof AgentView.Type

export const payoutChangeMessage = (id: string, newAddress: string, signedAt: string) =>
  `Handoff Desk payout address change\nagent: ${id}\nnew payout address: ${newAddress}\nsigned at: ${signedAt}`

export const PAYOUT_CHANGE_RULE =
  "The first payoutAddress is set freely (or named in your first filing). Changing it needs payoutSignature: " +
  "an EIP-191 personal_sign by the current payout address over 'Handoff Desk payout address change\\nagent: <id>\\n" +
  "new payout address: <address>\\nsigned at: <payoutSignedAt>', with payoutSignedAt within 10 minutes of now."
