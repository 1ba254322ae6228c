import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { startDesk } from "../support/Process.ts"
import { backends, DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"
import { chainScoped, eventually, freshPayee, type TestChainShape } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { call, deskEnv, runAudit } from "./support/Processes.ts"
import { isPayoutPreparation } from "./support/RpcProxy.ts"
import { transfersCarrying } from "./support/Transfers.ts"

const PRICE = 500_000n
const RPC_TIMEOUT_MS = 6_000

/** Every call of desk A takes about 2 × this; its old lease (2 × this + confirm + 5 s) was shorter than signing. */
const envOf = (testChain: TestChainShape, rpcUrl: string, databaseUrl: string) => ({
  ...deskEnv(testChain, rpcUrl, { DATABASE_URL: databaseUrl }),
  DESK_CHAIN_TIMEOUT_MS: String(RPC_TIMEOUT_MS),
  DESK_CONFIRM_TIMEOUT_MS: "1000"
})

// Two desks on one PostgreSQL: needs DATABASE_URL (the PGlite project reports it as skipped).
describe.skipIf(backends[0]!.name !== "postgres" || !backends[0]!.available)(
  "x402 payouts from two desks on one PostgreSQL",
  () => {
    it.scopedLive(
      "desk A's RPC answers each call only on viem's retry, desk B's directly: one payout transfer, and `sent` stays sent",
      () =>
        Effect.gen(function*() {
          const testChain = yield* chainScoped()
          const { balanceOf, chain, proxy } = testChain
          const databaseUrl = yield* freshDatabaseUrl(DATABASE_URL!)
          const deskA = yield* startDesk({ env: envOf(testChain, proxy.url, databaseUrl) })

          // A sale whose filer has no payout address yet: its 90 % is owed, and no worker touches it.
          const filer = newAgentId()
          const filed = yield* call(deskA.url, "/api/handoffs", {
            json: filing(filer, { priceUsd: 0.5 }),
            agent: filer
          })
          expect(filed.status).toBe(201)
          const buyer = newAgentId()
          const bought = yield* call(deskA.url, `/api/handoffs/${filed.json.id}/unlock`, {
            json: { payer: buyer },
            agent: buyer,
            headers: { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          })
          expect(bought.status).toBe(200)
          const { receiptId } = bought.json.receipt
          expect(bought.json.receipt.filerPayoutStatus).toBe("owed")

          // From now on desk A's RPC answers a call only when viem retries it, just before that retry times out too:
          // every call takes about 2 × DESK_CHAIN_TIMEOUT_MS.
          proxy.rule = () => ({ answerRetryAfterMs: RPC_TIMEOUT_MS - 1_000 })
          const preparing = new Promise<void>((resolve) => {
            const rule = proxy.rule
            proxy.rule = (rpc) => {
              if (isPayoutPreparation(rpc, receiptId)) resolve()
              return rule(rpc)
            }
          })
          const payee = freshPayee()
          expect(
            (yield* call(deskA.url, "/api/agents", { json: { id: filer, payoutAddress: payee }, agent: filer })).status
          ).toBe(200)
          yield* Effect.promise(() => preparing)

          // Desk A holds the payout and is signing it slowly; desk B starts on the same database with a fast RPC.
          const deskB = yield* startDesk({ env: envOf(testChain, chain.rpcUrl, databaseUrl) })
          const receiptOf = Effect.map(call(deskB.url, `/api/receipts?payer=${buyer}`), (_) => _.json.receipts[0])
          yield* eventually(receiptOf, (_) => _.filerPayoutStatus === "sent", 1_200)
          // Until desk A has gone quiet (no chain call for two of its retried calls), it may still write or broadcast.
          yield* eventually(
            Effect.sync(() => Date.now() - proxy.lastCallAt),
            (idle) => idle > 4 * RPC_TIMEOUT_MS,
            1_200
          )

          const paid = yield* receiptOf
          const transfers = yield* Effect.promise(() =>
            transfersCarrying(chain, chain.accounts.desk.address, receiptId)
          )
          expect(transfers.map((_) => _.txHash)).toEqual([paid.filerPayoutTxHash])
          expect(paid).toMatchObject({ filerPayoutStatus: "sent" })
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(450_000n)
          // Read while both desks run: PostgreSQL serves the audit beside them.
          const audited = yield* runAudit(envOf(testChain, chain.rpcUrl, databaseUrl))
          expect(audited.output).toContain("audit: the ledger and the chain agree")
          expect(audited.code).toBe(0)
          yield* deskA.stop()
          yield* deskB.stop()
        }),
      { timeout: 300_000 }
    )
  }
)
