import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { newAgentId } from "../support/Fixtures.ts"
import { startDesk } from "../support/Process.ts"
import { backends } from "../support/Storage.ts"
import { chainScoped, eventually, freshPayee } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { call, deskEnv, fileWith, processStore, receiptsAt, runAudit } from "./support/Processes.ts"
import { isPayoutBroadcast, isSettlementBroadcast, txHashOf } from "./support/RpcProxy.ts"

const PRICE = 500_000n

const fileWithPayee = (url: string, payee: string) => Effect.map(fileWith(url, 0.5, payee), (_) => _.id)

// PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
describe.skipIf(!backends[0]!.available)(
  `x402 crash safety over ${backends[0]!.name}: desk processes killed with SIGKILL`,
  () => {
    it.scopedLive(
      "killed between settlement and receipt, between payout signing and broadcast, and before a payout was recorded",
      () =>
        Effect.gen(function*() {
          const testChain = yield* chainScoped()
          const { balanceOf, chain, proxy } = testChain
          const env = deskEnv(testChain, testChain.proxy.url, yield* processStore)
          const first = yield* startDesk({ env })
          const payee = freshPayee()
          const id = yield* fileWithPayee(first.url, payee)
          const buyer = newAgentId()
          const header = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          // 1. The settlement reaches the chain, and the desk dies while it waits for the answer.
          proxy.rule = (rpc) =>
            isSettlementBroadcast(rpc) ? "forward-then-hang" : isPayoutBroadcast(rpc) ? "hang" : "pass"
          const landed = proxy.nextForwarded()
          yield* Effect.fork(
            call(first.url, `/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers: header })
          )
          const settlementTx = txHashOf((yield* Effect.promise(() => landed)).call)
          expect(yield* first.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" })
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)

          // 2. Without a request from the buyer, the restarted desk finds the pending claim, the chain says it was
          // paid, the receipt is written and the payout signed and stored; its broadcast never arrives: kill it there.
          proxy.rule = (rpc) => (isPayoutBroadcast(rpc) ? "hang" : "pass")
          const held = proxy.nextFault()
          const second = yield* startDesk({ env })
          const [receipt] = yield* eventually(receiptsAt(second.url, buyer), (_) => _.length > 0, 300)
          expect(receipt).toMatchObject({ handoffId: id, mode: "x402", txHash: settlementTx, txUrl: null })
          const signedPayout = txHashOf((yield* Effect.promise(() => held)).call)
          yield* second.stop("SIGKILL")
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(0n)

          // 3. The next start re-broadcasts the stored transaction: the same hash, paid once.
          proxy.rule = () => "pass"
          const third = yield* startDesk({ env })
          const [paid] = yield* eventually(receiptsAt(third.url, buyer), (_) => _[0]?.filerPayoutStatus === "sent", 300)
          expect(paid).toMatchObject({ receiptId: receipt.receiptId, filerPayoutTxHash: signedPayout })
          const retried = yield* call(third.url, `/api/handoffs/${id}/unlock`, {
            json: { payer: buyer },
            agent: buyer,
            headers: header
          })
          expect(retried.json).toMatchObject({ alreadyUnlocked: true, receipt: { receiptId: receipt.receiptId } })
          expect((yield* call(third.url, `/api/handoffs/${id}/body`, { agent: buyer })).status).toBe(200)
          expect(yield* receiptsAt(third.url, buyer)).toHaveLength(1)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(450_000n)

          // 4. A payout that reaches the chain while the desk dies before recording it: the stored hash is found
          // mined at the next start, so nothing is signed again (signing anew would pay the filer twice).
          const payeeB = freshPayee()
          const idB = yield* fileWithPayee(third.url, payeeB)
          proxy.rule = (rpc) => (isPayoutBroadcast(rpc) ? "forward-then-hang" : "pass")
          const broadcast = proxy.nextForwarded()
          const headerB = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          expect(
            (yield* call(third.url, `/api/handoffs/${idB}/unlock`, {
              json: { payer: buyer },
              agent: buyer,
              headers: headerB
            })).status
          )
            .toBe(200)
          const payoutB = txHashOf((yield* Effect.promise(() => broadcast)).call)
          yield* third.stop("SIGKILL")
          expect(yield* Effect.promise(() => balanceOf(payeeB))).toBe(450_000n)
          proxy.rule = () => "pass"
          const fourth = yield* startDesk({ env })
          const sent = yield* eventually(
            receiptsAt(fourth.url, buyer),
            (_) => _.find((r) => r.handoffId === idB)?.filerPayoutStatus === "sent",
            300
          )
          expect(sent.find((r) => r.handoffId === idB)?.filerPayoutTxHash).toBe(payoutB)
          yield* Effect.sleep("1 second")
          expect(yield* Effect.promise(() => balanceOf(payeeB))).toBe(450_000n)
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(450_000n)

          // The embedded store takes one process at a time: the audit runs once the desk is stopped, whatever desk
          // answers on its default port (8402) meanwhile: it asks the directory's lock, not an address.
          yield* fourth.stop()
          const audited = yield* runAudit(env)
          expect(audited.output).toContain("audit: the ledger and the chain agree")
          expect(audited.code).toBe(0)
        }),
      { timeout: 240_000 }
    )
  }
)
