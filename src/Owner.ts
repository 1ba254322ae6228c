import { Context, Effect, Layer, Option, Schema } from "effect"
import { NotFound } from "./Domain/Errors.ts"
import { DeskId, handoffIdOf } from "./Domain/Ids.ts"
import { toUsd } from "./Domain/Money.ts"
import { OwnerRepo } from "./Owner/OwnerRepo.ts"
import type { OwnerView } from "./Owner/Responses.ts"
import { spanned } from "./Spans.ts"

const isDeskId = Schema.is(DeskId)

/** Where a sale's filer share stands: in the wallet, due on-chain, or kept on the ledger (no USDC). */
const bucketOf = (status: string): "onChain" | "owed" | "ledger" | "none" =>
  status === "sent"
    ? "onChain"
    : status === "owed" || status === "pending" || status === "failed"
    ? "owed"
    : status === "zero"
    ? "none"
    : "ledger"

const NOTE = "Anyone who knows this id can read this page, as they can use the id: keep it private. Spend counts " +
  "sales only (the sandbox's demo and your own handoffs are free); earnings are your 90 % of each sale."

const make = Effect.gen(function*() {
  const fn = yield* spanned
  const repo = yield* OwnerRepo

  const notFound = (id: string) =>
    new NotFound({ message: `No agent ${id} is known to this desk: it has neither filed nor bought anything yet.` })

  const view = fn("Owner.view")(function*(id: string) {
    const agent = isDeskId(id) ? yield* repo.agent(id) : Option.none()
    if (Option.isNone(agent)) return yield* Effect.fail(notFound(id))
    const [filings, purchases, earnings, days, totals] = yield* Effect.all(
      [repo.filings(id), repo.purchases(id), repo.earnings(id), repo.days(id), repo.totals(id)],
      { concurrency: 1 }
    )
    const sum = (bucket: ReturnType<typeof bucketOf>) =>
      toUsd(earnings.filter((_) => bucketOf(_.payout_status) === bucket).reduce((total, _) => total + _.filer_micro, 0))
    const { created_at, payout_address, spend_cap_micro, spent_micro } = agent.value
    return {
      ok: true,
      id: DeskId.make(id),
      since: created_at.toISOString(),
      payoutAddress: payout_address,
      spend: {
        capUsd: toUsd(spend_cap_micro),
        spentUsd: toUsd(spent_micro),
        leftUsd: toUsd(Math.max(0, spend_cap_micro - spent_micro)),
        purchases: totals.bought
      },
      earnings: {
        sales: earnings.reduce((total, _) => total + _.sales, 0),
        totalUsd: toUsd(earnings.reduce((total, _) => total + _.filer_micro, 0)),
        onChainUsd: sum("onChain"),
        owedUsd: sum("owed"),
        ledgerUsd: sum("ledger")
      },
      filings: {
        total: totals.filings,
        items: filings.map((row) => ({
          id: handoffIdOf(row.seq),
          title: row.title,
          priceUsd: toUsd(row.price_micro),
          filedAt: row.filed_at.toISOString(),
          sales: row.sales,
          earnedUsd: toUsd(row.earned_micro)
        }))
      },
      purchases: {
        total: totals.purchases,
        items: purchases.map((row) => ({
          receiptId: row.receipt_id,
          handoffId: handoffIdOf(row.handoff_seq),
          title: row.title,
          filer: row.filer,
          filerDid: row.filer_did,
          priceUsd: toUsd(row.price_micro),
          kind: row.kind,
          mode: row.mode,
          at: row.created_at.toISOString()
        }))
      },
      activity: days.map((row) => ({
        day: row.day,
        spentUsd: toUsd(row.spent_micro),
        earnedUsd: toUsd(row.earned_micro)
      })),
      note: NOTE
    } satisfies OwnerView
  })

  return { view } as const
})

/** What an agent's human owner looks at: its filings and their sales, its purchases, its spend against its cap. */
export class Owner extends Context.Tag("Owner")<Owner, Effect.Effect.Success<typeof make>>() {
  static readonly layer = Layer.effect(Owner, make).pipe(Layer.provide(OwnerRepo.layer))
}
