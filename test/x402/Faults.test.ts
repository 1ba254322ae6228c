import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { resetAssetContractCache } from "@x402/evm"
import { Effect } from "effect"
import { Payouts } from "../../src/Payouts.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { expectAuditPasses } from "./support/Audit.ts"
import {
  eventually,
  fileHandoff,
  freshPayee,
  nowSeconds,
  receiptsOf,
  send,
  TestChain,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { isPayoutBroadcast, isSettlementBroadcast, txHashOf } from "./support/RpcProxy.ts"

const PRICE = 200_000n

const claimsOf = (buyer: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ status: string }>`SELECT status FROM settlements WHERE payer = ${buyer} ORDER BY seq`
  ).pipe(
    Effect.map((rows) => rows.map((_) => _.status)),
    Effect.orDie
  )

/** Works the outbox until no payout is left in flight, so a test starts from a quiet desk wallet. */
const drainOutbox = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const payouts = yield* Payouts
  const inFlight = sql<
    { n: number }
  >`SELECT count(*)::int AS n FROM payouts WHERE status IN ('pending', 'signed', 'failed')`
  yield* eventually(Effect.zipRight(payouts.runOnce, inFlight), ([row]) => row!.n === 0, 50)
}).pipe(Effect.orDie)

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 faults over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("RPC down before settling: a clean 503, nothing recorded; the same payment works once it is back", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
          const buyer = newAgentId()
          const header = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          proxy.down = true
          const down = yield* unlockWith(id, buyer, header).pipe(
            Effect.ensuring(Effect.sync(() => (proxy.down = false)))
          )
          expect(down.status).toBe(503)
          expect(down.json).toMatchObject({ ok: false, error: "settlement_unavailable", retryAfterSeconds: 5 })
          expect(down.headers.get("retry-after")).toBe("5")
          expect(yield* receiptsOf(buyer)).toEqual([])
          expect(yield* claimsOf(buyer)).toEqual([])
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)

          const up = yield* unlockWith(id, buyer, header)
          expect(up.status).toBe(200)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      for (const method of ["eth_getCode", "eth_call"]) {
        it.effect(`an RPC that refuses ${method} alone is a clean 503 for v1 and v2, and the desk goes on`, () =>
          Effect.gen(function*() {
            const { balanceOf, chain, proxy } = yield* TestChain
            const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
            const balance = Effect.promise(() => balanceOf(chain.accounts.buyer.address))
            for (const version of ["v1", "v2"] as const) {
              const buyer = newAgentId()
              const payment = yield* Effect.promise(() => forger(chain)[version](PRICE))
              const header = { [version === "v1" ? "x-payment" : "payment-signature"]: payment }
              const before = yield* balance
              // x402 checks the asset's code once per 15 minutes; an expired check is when eth_getCode is asked.
              resetAssetContractCache()
              proxy.rule = (call) => call.method === method ? "refuse" : "pass"
              const refused = yield* unlockWith(id, buyer, header).pipe(
                Effect.ensuring(Effect.sync(() => (proxy.rule = () => "pass")))
              )
              expect(refused.status, `${version} while ${method} is refused`).toBe(503)
              expect(refused.json).toMatchObject({ ok: false, error: "settlement_unavailable" })
              expect(yield* claimsOf(buyer)).toEqual([])
              expect(yield* balance).toBe(before)
              // No refusal stuck to the payment: once the RPC answers, the same one buys.
              expect((yield* unlockWith(id, buyer, header)).status).toBe(200)
              expect(yield* balance).toBe(before - PRICE)
            }
            yield* expectAuditPasses
          }))
      }

      it.effect("a refused broadcast leaves the claim pending (202, Retry-After), and a retry settles it exactly once", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
          const buyer = newAgentId()
          const header = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          proxy.rule = (call) => (isSettlementBroadcast(call) ? "refuse" : "pass")
          const pending = yield* unlockWith(id, buyer, header).pipe(
            Effect.ensuring(Effect.sync(() => (proxy.rule = () => "pass")))
          )
          expect(pending.status).toBe(202)
          expect(pending.json).toMatchObject({ ok: false, error: "settlement_pending", retryAfterSeconds: 5 })
          expect(pending.headers.get("retry-after")).toBe("5")
          expect(yield* receiptsOf(buyer)).toEqual([])
          expect(yield* claimsOf(buyer)).toEqual(["pending"])
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)
          // Its body read meanwhile is the same 202, not a 402 that has an x402 client sign a second payment.
          const reading = yield* send(`/api/handoffs/${id}/body`, { headers: { "x-agent-id": buyer } })
          expect(reading.status).toBe(202)
          expect(reading.json).toMatchObject({ ok: false, error: "settlement_pending" })
          expect(reading.headers.get("retry-after")).toBe("5")
          expect(reading.headers.get("payment-required")).toBeNull()
          // Another identity is still asked to pay.
          expect((yield* send(`/api/handoffs/${id}/body`, { headers: { "x-agent-id": newAgentId() } })).status)
            .toBe(402)

          const settled = yield* unlockWith(id, buyer, header)
          expect(settled.status).toBe(200)
          expect(settled.json.alreadyUnlocked).toBe(false)
          expect(yield* unlockWith(id, buyer, header)).toMatchObject({ status: 200, json: { alreadyUnlocked: true } })
          expect(yield* claimsOf(buyer)).toEqual(["settled"])
          expect(yield* receiptsOf(buyer)).toHaveLength(1)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      it.effect(
        "a retry of a pending payment within 30 s of its expiry is its claim's 202, then its receipt, not a 402",
        () =>
          Effect.gen(function*() {
            // The window that refuses a new payment near its expiry answered a fresh 402 to the retry of one the desk
            // was still settling, which the chain then charged (outside recheck of issue 4).
            const { balanceOf, chain, proxy } = yield* TestChain
            const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
            const buyer = newAgentId()
            const validBefore = nowSeconds() + 40
            const header = {
              "x-payment": yield* Effect.promise(() =>
                forger(chain).v1(PRICE, { authorization: { validBefore: BigInt(validBefore) } })
              )
            }
            const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
            proxy.rule = (call) => (isSettlementBroadcast(call) ? "refuse" : "pass")
            const late = Effect.gen(function*() {
              expect((yield* unlockWith(id, buyer, header)).status).toBe(202)
              // Into the last 30 s of the authorization, where a new payment would be refused.
              yield* Effect.sleep(`${Math.max(0, (validBefore - 29 - nowSeconds()) * 1000)} millis`)
              const retried = yield* unlockWith(id, buyer, header)
              expect(retried.status).toBe(202)
              expect(retried.json).toMatchObject({ error: "settlement_pending" })
            })
            yield* late.pipe(Effect.ensuring(Effect.sync(() => (proxy.rule = () => "pass"))))
            const settled = yield* unlockWith(id, buyer, header)
            expect(settled.status).toBe(200)
            expect(settled.headers.get("x-payment-response")).not.toBeNull()
            expect(yield* claimsOf(buyer)).toEqual(["settled"])
            expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
            yield* expectAuditPasses
          }),
        { timeout: 90_000 }
      )

      it.effect("a settlement whose answer is lost (and the RPC with it) is 202, then its retry returns the receipt", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
          const buyer = newAgentId()
          const header = { "payment-signature": yield* Effect.promise(() => forger(chain).v2(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          proxy.rule = (call) => (isSettlementBroadcast(call) ? "lose-answer-then-down" : "pass")
          const lost = yield* unlockWith(id, buyer, header).pipe(
            Effect.ensuring(Effect.sync(() => {
              proxy.rule = () => "pass"
              proxy.down = false
            }))
          )
          expect(lost.status).toBe(202)
          // The money moved, but the desk could not confirm it: no receipt yet, and no second charge later.
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          expect(yield* receiptsOf(buyer)).toEqual([])

          const found = yield* unlockWith(id, buyer, header)
          expect(found.status).toBe(200)
          expect(found.json.receipt.txHash).toMatch(/^0x/)
          expect(yield* receiptsOf(buyer)).toHaveLength(1)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      it.effect("a failed payout shows `failed`, then the worker re-broadcasts the same signed transaction to `sent`", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          yield* drainOutbox
          const payee = freshPayee()
          const { id } = yield* fileHandoff(0.2, payee)
          const buyer = newAgentId()
          proxy.rule = (call) => (isPayoutBroadcast(call) ? "refuse" : "pass")

          const bought = yield* unlockWith(id, buyer, {
            "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE))
          })
          expect(bought.status).toBe(200)
          yield* eventually(receiptsOf(buyer), (_) => _[0]?.filerPayoutStatus === "failed")
          const refused = proxy.faulted.find((_) => isPayoutBroadcast(_.call, bought.json.receipt.receiptId))
          const signedHash = txHashOf(refused!.call)
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(0n)

          proxy.rule = () => "pass"
          const payouts = yield* Payouts
          const [sent] = yield* eventually(
            Effect.zipRight(payouts.runOnce, receiptsOf(buyer)),
            (_) => _[0]?.filerPayoutStatus === "sent",
            30
          )
          expect(sent.filerPayoutTxHash).toBe(signedHash)
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(180_000n)
          yield* payouts.runOnce
          expect(yield* Effect.promise(() => balanceOf(payee))).toBe(180_000n)
          yield* expectAuditPasses
        }))
    })
  })
}
