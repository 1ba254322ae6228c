import { describe, expect, layer } from "@effect/vitest"
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier"
import { Effect } from "effect"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { expectAuditPasses } from "./support/Audit.ts"
import {
  decodeHeader,
  fileHandoff,
  freshPayee,
  receiptsOf,
  TestChain,
  unlockUntilFinal,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 200_000n

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 payment ids over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      /** A v2 payment with a fresh authorization under `id`, put in the challenge's extensions by x402's own helper. */
      const paymentUnder = (handoffId: string, id: string) =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          // The challenge as anyone gets it (the buyer itself may hold the unlock already).
          const challenge = decodeHeader((yield* unlockWith(handoffId, newAgentId())).headers.get("payment-required"))
          expect(challenge.extensions["payment-identifier"]).toMatchObject({ info: { required: false } })
          const extensions = appendPaymentIdentifierToExtensions(structuredClone(challenge.extensions), id)
          return yield* Effect.promise(() => forger(chain).v2(PRICE, { extensions }))
        })

      it.effect("retries under one payment id with new authorizations return the first receipt and settle once", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id: handoff } = yield* fileHandoff(0.2, freshPayee())
          const buyer = newAgentId()
          const paymentId = generatePaymentId("pay_")
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          const first = yield* unlockUntilFinal(handoff, buyer, {
            "payment-signature": yield* paymentUnder(handoff, paymentId)
          })
          expect(first.status).toBe(200)
          expect(first.json.alreadyUnlocked).toBe(false)
          const settlementOf = (answer: typeof first) =>
            JSON.parse(Buffer.from(answer.headers.get("payment-response") ?? "bnVsbA==", "base64").toString())
          const settlement = settlementOf(first)
          expect(settlement).toMatchObject({ success: true, transaction: first.json.receipt.txHash })
          // Two retries, each with an authorization never seen: the first outcome, nothing settled. The outcome
          // includes its settlement (it came without PAYMENT-RESPONSE when the retry's authorization was new).
          for (let retry = 0; retry < 2; retry++) {
            const again = yield* unlockWith(handoff, buyer, {
              "payment-signature": yield* paymentUnder(handoff, paymentId)
            })
            expect(again.status).toBe(200)
            expect(again.json).toMatchObject({
              alreadyUnlocked: true,
              receipt: { receiptId: first.json.receipt.receiptId }
            })
            // Its offer-receipt is signed anew (issuedAt), for the same transaction.
            expect(settlementOf(again)).toMatchObject({
              success: true,
              transaction: settlement.transaction,
              payer: settlement.payer,
              amount: settlement.amount
            })
          }
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          expect(yield* receiptsOf(buyer)).toHaveLength(1)
          yield* expectAuditPasses
        }))

      it.effect("concurrent requests under one payment id settle one authorization", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id: handoff } = yield* fileHandoff(0.2, freshPayee())
          const buyer = newAgentId()
          const paymentId = generatePaymentId()
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const headers = yield* Effect.all(Array.from({ length: 4 }, () => paymentUnder(handoff, paymentId)))
          const answers = yield* Effect.all(
            headers.map((header) => unlockUntilFinal(handoff, buyer, { "payment-signature": header })),
            { concurrency: "unbounded" }
          )
          expect(answers.map((_) => _.status)).toEqual([200, 200, 200, 200])
          expect(new Set(answers.map((_) => _.json.receipt.receiptId)).size).toBe(1)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      it.effect("a payment id never buys a second purchase: another handoff or another buyer is refused, unpaid", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const [a, b] = [yield* fileHandoff(0.2, freshPayee()), yield* fileHandoff(0.2, freshPayee())]
          const buyer = newAgentId()
          const paymentId = generatePaymentId()
          const bought = yield* unlockUntilFinal(a.id, buyer, {
            "payment-signature": yield* paymentUnder(a.id, paymentId)
          })
          expect(bought.status).toBe(200)
          const after = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          const otherHandoff = yield* unlockWith(b.id, buyer, {
            "payment-signature": yield* paymentUnder(b.id, paymentId)
          })
          const otherBuyer = newAgentId()
          const secondBuyer = yield* unlockWith(a.id, otherBuyer, {
            "payment-signature": yield* paymentUnder(a.id, paymentId)
          })
          for (const refused of [otherHandoff, secondBuyer]) {
            expect(refused.status).toBe(402)
            expect(refused.json).toMatchObject({
              ok: false,
              error: "payment_invalid",
              reason: "payment_identifier_reused"
            })
          }
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(after)
          expect(yield* receiptsOf(otherBuyer)).toEqual([])
        }))

      it.effect("a malformed payment id is refused before anything is claimed or charged", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id: handoff } = yield* fileHandoff(0.2, freshPayee())
          const buyer = newAgentId()
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const header = yield* Effect.promise(() =>
            forger(chain).v2(PRICE, {
              extensions: { "payment-identifier": { info: { required: false, id: "short" } } }
            })
          )
          const refused = yield* unlockWith(handoff, buyer, { "payment-signature": header })
          expect(refused.status).toBe(402)
          expect(refused.json).toMatchObject({ error: "payment_invalid", reason: "invalid_payment_identifier" })
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)
          expect(yield* receiptsOf(buyer)).toEqual([])
        }))
    })
  })
}
