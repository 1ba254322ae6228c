import { Schema } from "effect"
import { getAddress, isAddress } from "viem"
import { isIsoTime } from "./Discover.ts"
import type { Issue } from "./Errors.ts"
import { DeskId } from "./Ids.ts"
import { echo } from "./Issues.ts"
import { UsdAmount } from "./Money.ts"

/**
 * An address's JSON Schema: its shape (the EIP-55 checksum is the desk's own check). A node with its own jsonSchema
 * is rendered from it alone, so its description goes inside.
 */
export const evmAddressJsonSchema = (description: string) => ({
  type: "string",
  pattern: "^0x[0-9a-fA-F]{40}$",
  description
})

/** An EVM address with a valid EIP-55 checksum when mixed-case; stored checksummed. */
export const EvmAddress = Schema.transform(
  Schema.String.pipe(
    Schema.filter((s): boolean => isAddress(s, { strict: true }), {
      message: () =>
        "must be a 0x-prefixed 20-byte EVM address: all lowercase, or mixed-case with a valid EIP-55 checksum"
    })
  ),
  Schema.String,
  { strict: true, decode: (s) => getAddress(s), encode: (s) => s }
).annotations({
  identifier: "EvmAddress",
  jsonSchema: evmAddressJsonSchema(
    "EVM address for USDC payouts: all lowercase, or with a valid EIP-55 checksum; stored checksummed"
  )
})

const SIGNED_AT = "ISO 8601 time named in the signed message; within 10 minutes of now and later than the last change's"

export const AgentRegistration = Schema.Struct({
  id: DeskId,
  payoutAddress: Schema.optional(EvmAddress),
  spendCapUsd: Schema.optional(
    UsdAmount.annotations({ description: "Highest total you allow this identity to spend" })
  ),
  requireSignIn: Schema.optional(
    Schema.Literal(true).annotations({
      description: "true: the bodies this id bought are read only with a Sign-In-With-X proof by the wallet that " +
        "paid (SIGN-IN-WITH-X on GET /api/handoffs/:id/body), never by X-AGENT-ID alone. One way: it cannot be " +
        "turned off, since anyone who knows the id could turn it off. Refused (422) by a desk without a chain"
    })
  ),
  payoutSignature: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^0x[0-9a-fA-F]+$/)).annotations({
      description: "Needed only to change a registered payoutAddress: EIP-191 signature by the current payout " +
        "address over the message of GET /api/agents/:id (payoutChangeMessage)"
    })
  ),
  payoutSignedAt: Schema.optional(
    // Kept as sent: the signed message names it as written.
    Schema.String.pipe(
      Schema.filter(isIsoTime, {
        message: (issue) => `must be an ISO 8601 time, such as 2026-01-31T00:00:00Z; got ${echo(issue.actual)}`
      })
    ).annotations({ jsonSchema: { type: "string", format: "date-time", description: SIGNED_AT } })
  )
}).annotations({ identifier: "AgentRegistration", parseOptions: { onExcessProperty: "error", errors: "all" } })
export type AgentRegistration = typeof AgentRegistration.Type

export const AgentView = Schema.Struct({
  ok: Schema.Literal(true),
  id: DeskId,
  payoutAddress: Schema.NullOr(Schema.String),
  spendCapUsd: Schema.Number,
  spentUsd: Schema.Number,
  earnedUsd: Schema.Number.annotations({
    description: "The filer's share of every sale of its handoffs, however it is settled: desk-receipt shares " +
      "(filerPayoutStatus ledger, recorded only, never paid on-chain) and x402 shares, sent or still owed"
  }),
  earnedUsdOnChain: Schema.Number.annotations({
    description: "The part of earnedUsd sent in USDC to the payout address (filerPayoutStatus sent)"
  }),
  filed: Schema.Int,
  sales: Schema.Int,
  purchases: Schema.Int,
  since: Schema.String,
  requireSignIn: Schema.Boolean.annotations({
    description: "true: X-AGENT-ID alone reads no bodies for this id; a Sign-In-With-X proof by the paying wallet does"
  }),
  payoutChangeRule: Schema.String
}).annotations({ identifier: "Agent" })
export type AgentView = typeof AgentView.Type

export const ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"

/** The addresses of the rail a payout address may not be. */
export interface PayoutRail {
  readonly assetAddress: string | null
  readonly payTo: string | null
}

/**
 * Why `address` cannot receive the filer's USDC, if it cannot: a transfer to the zero address is refused by
 * the token (so the payout would be retried for ever), the token contract would keep it, and the desk's own
 * payTo would pay the share back to the desk.
 */
export const payoutAddressProblem = (address: string, rail: PayoutRail): string | undefined => {
  const same = (other: string | null) => other !== null && other.toLowerCase() === address.toLowerCase()
  if (same(ZERO_ADDRESS)) return "is the zero address, which cannot receive USDC; name a wallet you control"
  if (same(rail.assetAddress)) {
    return "is the USDC token contract itself, which cannot receive payouts; name a wallet you control"
  }
  if (same(rail.payTo)) {
    return "is the desk's own payTo address; payouts to it would go back to the desk, so name your own wallet"
  }
  return undefined
}

/**
 * The issues of a request its schema refused (`decoded`), with the payout address rule read from its parsed JSON
 * (`body`): the rule depends on the desk's rail, so no schema judges it, and one 422 lists it beside the others. Not
 * where the schema already names `payoutAddress` (it is no address then).
 */
export const withPayoutIssues = (
  decoded: ReadonlyArray<Issue>,
  body: unknown,
  rail: PayoutRail
): ReadonlyArray<Issue> => {
  const address = typeof body === "object" && body !== null && "payoutAddress" in body ? body.payoutAddress : undefined
  if (typeof address !== "string" || decoded.some((_) => _.path === "payoutAddress")) return decoded
  const problem = payoutAddressProblem(address, rail)
  return problem === undefined ? decoded : [...decoded, { path: "payoutAddress", message: problem }]
}

export const payoutChangeMessage = (id: string, newAddress: string, signedAt: string) =>
  `Handoff Desk payout address change\nagent: ${id}\nnew payout address: ${newAddress}\nsigned at: ${signedAt}`

export const PAYOUT_CHANGE_RULE =
  "The first payoutAddress is set freely (or named in your first filing). Changing it needs payoutSignature: " +
  "an EIP-191 personal_sign by the current payout address over 'Handoff Desk payout address change\\nagent: <id>\\n" +
  "new payout address: <address>\\nsigned at: <payoutSignedAt>', with payoutSignedAt within 10 minutes of now " +
  "and later than the last change's (a signature is used once)."
