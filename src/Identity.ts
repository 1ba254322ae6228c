import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { verifyMessage } from "viem"
import {
  type AgentRegistration,
  type AgentView,
  PAYOUT_CHANGE_RULE,
  payoutAddressProblem,
  payoutChangeMessage
} from "./Domain/Agent.ts"
import { AgentMismatch, InvalidRequest, NotFound, PayoutChangeRefused } from "./Domain/Errors.ts"
import { DeskId } from "./Domain/Ids.ts"
import { toUsd } from "./Domain/Money.ts"
import { AgentRepo, type AgentRow } from "./Identity/AgentRepo.ts"
import { RailProfile } from "./Settlement.ts"
import { spanned } from "./Spans.ts"

const SIGNATURE_WINDOW_MS = 10 * 60 * 1000

const isDeskId = Schema.is(DeskId)

const refused = (message: string) => Effect.fail(new PayoutChangeRefused({ message }))

/**
 * A registered payout address changes only with a fresh EIP-191 signature by that address, signed after the last
 * change: a signature is used once, so a change A -> B cannot be sent again after the owner went back to A.
 * Answers the signed time to keep, or null when nothing signed changed.
 */
const checkPayoutChange = (agent: AgentRow, next: string, request: AgentRegistration) =>
  Effect.gen(function*() {
    if (agent.payout_address === null || agent.payout_address === next) return null
    if (request.payoutSignature === undefined || request.payoutSignedAt === undefined) {
      return yield* refused(
        "This identity already has a payoutAddress; changing it needs payoutSignature and payoutSignedAt. " +
          PAYOUT_CHANGE_RULE
      )
    }
    const signedAt = Date.parse(request.payoutSignedAt)
    if (Number.isNaN(signedAt) || Math.abs(Date.now() - signedAt) > SIGNATURE_WINDOW_MS) {
      return yield* refused("payoutSignedAt must be an ISO 8601 time within 10 minutes of now; sign a fresh message.")
    }
    if (agent.payout_signed_at !== null && signedAt <= agent.payout_signed_at.getTime()) {
      return yield* refused(
        `payoutSignedAt must be later than the last change's (${agent.payout_signed_at.toISOString()}); ` +
          "a signature is used once, so sign a fresh message."
      )
    }
    const valid = yield* Effect.promise(() =>
      verifyMessage({
        address: agent.payout_address as `0x${string}`,
        message: payoutChangeMessage(agent.id, next, request.payoutSignedAt!),
        signature: request.payoutSignature as `0x${string}`
      }).catch(() => false)
    )
    if (!valid) return yield* refused("payoutSignature was not made by the current payout address over that message.")
    return new Date(signedAt)
  })

const make = Effect.gen(function*() {
  const fn = yield* spanned
  const repo = yield* AgentRepo
  const sql = yield* SqlClient.SqlClient
  const rail = yield* RailProfile

  const view = fn("Identity.view")(function*(id: string) {
    const row = isDeskId(id) ? yield* repo.find(id) : Option.none()
    if (Option.isNone(row)) {
      return yield* Effect.fail(new NotFound({ message: `No agent ${id} is known to this desk yet.` }))
    }
    const stats = yield* repo.stats(id)
    return {
      ok: true,
      id: DeskId.make(row.value.id),
      payoutAddress: row.value.payout_address,
      spendCapUsd: toUsd(row.value.spend_cap_micro),
      spentUsd: toUsd(row.value.spent_micro),
      earnedUsd: toUsd(stats.earned_micro),
      earnedUsdOnChain: toUsd(stats.earned_on_chain_micro),
      filed: stats.filed,
      sales: stats.sales,
      purchases: stats.purchases,
      since: row.value.created_at.toISOString(),
      requireSignIn: row.value.require_sign_in,
      payoutChangeRule: PAYOUT_CHANGE_RULE
    } satisfies AgentView
  })

  /** `caller` is the X-AGENT-ID of the request: an agent registers and changes only its own settings. */
  const register = fn("Identity.register")(function*(caller: DeskId, request: AgentRegistration) {
    if (caller !== request.id) {
      return yield* Effect.fail(
        new AgentMismatch({
          message: "X-AGENT-ID must equal id: an agent sets only its own spendCapUsd and payoutAddress."
        })
      )
    }
    if (
      request.payoutAddress === undefined && request.spendCapUsd === undefined && request.requireSignIn === undefined
    ) {
      return yield* Effect.fail(
        new InvalidRequest({
          message: "Send payoutAddress, spendCapUsd or requireSignIn (any of them).",
          issues: [{ path: "", message: "needs payoutAddress, spendCapUsd or requireSignIn" }]
        })
      )
    }
    const problem = request.payoutAddress === undefined ? undefined : payoutAddressProblem(request.payoutAddress, rail)
    if (problem !== undefined) {
      return yield* Effect.fail(
        new InvalidRequest({
          message: `payoutAddress ${problem}.`,
          issues: [{ path: "payoutAddress", message: problem }]
        })
      )
    }
    // Without a chain no wallet paid for anything here, so none could sign in: the id would never read again.
    if (request.requireSignIn === true && !rail.x402Ready) {
      return yield* Effect.fail(
        new InvalidRequest({
          message: "requireSignIn needs a desk that takes on-chain payments: this one has no wallet to sign in " +
            "with (Sign-In-With-X), so the id could never read a body again.",
          issues: [{ path: "requireSignIn", message: "this desk has no Sign-In-With-X (no chain configured)" }]
        })
      )
    }
    yield* sql.withTransaction(Effect.gen(function*() {
      const agent = yield* repo.lock(request.id)
      const payoutAddress = request.payoutAddress ?? agent.payout_address
      const signedAt = payoutAddress === null ? null : yield* checkPayoutChange(agent, payoutAddress, request)
      const cap = request.spendCapUsd ?? agent.spend_cap_micro
      if (cap < agent.spent_micro) {
        return yield* Effect.fail(
          new InvalidRequest({
            message: `spendCapUsd cannot go below what this identity already spent (${toUsd(agent.spent_micro)} USD).`,
            issues: [{ path: "spendCapUsd", message: "must be at least spentUsd" }]
          })
        )
      }
      yield* repo.update(agent.id, {
        payoutAddress,
        payoutSignedAt: signedAt ?? agent.payout_signed_at,
        capMicro: cap,
        requireSignIn: request.requireSignIn ?? agent.require_sign_in
      })
    })).pipe(Effect.catchTag("SqlError", Effect.die))
    return yield* Effect.orDie(view(request.id))
  })

  return { view, register, ensure: repo.ensure } as const
})

export class Identity extends Context.Tag("Identity")<Identity, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Identity, make).pipe(Layer.provide(AgentRepo.layer))
}
