import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { expectAuditPasses } from "./support/Audit.ts"
import {
  decodeHeader,
  fileHandoff,
  nowSeconds,
  receiptsOf,
  send,
  type Sent,
  TestChain,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 300_000n

/** What every refused payment must leave behind: nothing. */
const nothingRecorded = (buyers: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const buyer of buyers) expect(yield* receiptsOf(buyer)).toEqual([])
    const [claims] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM settlements WHERE payer IN ${
      sql.in(buyers)
    }`
    expect(claims!.n).toBe(0)
    const [spent] = yield* sql<{ n: number }>`SELECT coalesce(sum(spent_micro), 0)::int AS n FROM agents WHERE id IN ${
      sql.in(buyers)
    }`
    expect(spent!.n).toBe(0)
  })

/**
 * `agent`, its cap set to 0.2 USD, sends a valid payment of 0.3 for `id`: 403 before any money moves. The buyer
 * wallet's balance, unchanged, comes back.
 */
const refusedOverCap = (id: string, agent: string) =>
  Effect.gen(function*() {
    const { balanceOf, chain } = yield* TestChain
    yield* send("/api/agents", { json: { id: agent, spendCapUsd: 0.2 }, agent })
    const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
    const payment = yield* Effect.promise(() => forger(chain).v1(PRICE))
    const refused = yield* unlockWith(id, agent, { "x-payment": payment })
    expect(refused.status).toBe(403)
    expect(refused.json).toMatchObject({ error: "spend_cap_exceeded", spendCapUsd: 0.2 })
    yield* nothingRecorded([agent])
    expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)
    return before
  })

const refusedWith = (answer: Sent, reason: string, name = reason) => {
  expect(answer.status, name).toBe(402)
  expect(answer.json, name).toMatchObject({ ok: false, error: "payment_invalid", reason, x402Version: 1 })
  expect(answer.json.message, name).not.toBe("")
  expect(answer.json.accepts, name).toHaveLength(1)
  expect(decodeHeader(answer.headers.get("payment-required")), name).toMatchObject({ x402Version: 2, error: reason })
}

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 attacks over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("each forged payment is refused with its reason; no receipt, no claim, no spend, no USDC moves", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const forge = forger(chain)
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const { id: pricier } = yield* fileHandoff(0.6, chain.accounts.filer.address)
          const balances = () =>
            Effect.promise(() =>
              Promise.all([balanceOf(chain.accounts.buyer.address), balanceOf(chain.accounts.desk.address)])
            )
          const before = yield* balances()
          const other = "0x90F79bf6EB2c4f870365E785982E1f101E93b906"
          const cases: ReadonlyArray<readonly [string, Effect.Effect<string>, string, string]> = [
            ["wrong amount", Effect.promise(() => forge.v1(PRICE - 1n)), id, "invalid_amount"],
            [
              "wrong amount (v2)",
              Effect.promise(() => forge.v2(PRICE - 1n, { accepted: { amount: "299999" } })),
              id,
              "invalid_amount"
            ],
            [
              "wrong payTo",
              Effect.promise(() => forge.v1(PRICE, { authorization: { to: other } })),
              id,
              "invalid_pay_to"
            ],
            [
              "wrong payTo (v2)",
              Effect.promise(() => forge.v2(PRICE, { accepted: { payTo: other } })),
              id,
              "invalid_pay_to"
            ],
            [
              "wrong asset (v2)",
              Effect.promise(() => forge.v2(PRICE, { accepted: { asset: other } })),
              id,
              "invalid_asset"
            ],
            [
              "signed for another asset",
              Effect.promise(() => forge.v1(PRICE, { domain: { verifyingContract: other } })),
              id,
              "invalid_exact_evm_signature"
            ],
            [
              "another network (v1 name)",
              Effect.promise(() => forge.v1(PRICE, { network: "base" })),
              id,
              "invalid_network"
            ],
            [
              "another network (CAIP-2)",
              Effect.promise(() => forge.v2(PRICE, { accepted: { network: "eip155:8453" } })),
              id,
              "invalid_network"
            ],
            [
              "signed for another chain id",
              Effect.promise(() => forge.v1(PRICE, { domain: { chainId: 8453 } })),
              id,
              "invalid_exact_evm_signature"
            ],
            [
              "expired",
              Effect.promise(() => forge.v1(PRICE, { authorization: { validBefore: BigInt(nowSeconds() - 1) } })),
              id,
              "authorization_expired"
            ],
            [
              // Never expiring, a claim the chain does not decide (a wallet short of the price) would stay pending.
              "valid far longer than the challenge's maxTimeoutSeconds",
              Effect.promise(() => forge.v1(PRICE, { authorization: { validBefore: 2n ** 255n } })),
              id,
              "authorization_valid_too_long"
            ],
            [
              "valid 11 minutes, past maxTimeoutSeconds (5) and the clock skew allowed (5)",
              Effect.promise(() => forge.v2(PRICE, { authorization: { validBefore: BigInt(nowSeconds() + 660) } })),
              id,
              "authorization_valid_too_long"
            ],
            [
              "not yet valid",
              Effect.promise(() => forge.v1(PRICE, { authorization: { validAfter: BigInt(nowSeconds() + 3600) } })),
              id,
              "authorization_not_yet_valid"
            ],
            [
              "signed by another key",
              Effect.promise(() => forge.v1(PRICE, { signer: chain.accounts.other.privateKey })),
              id,
              "invalid_exact_evm_signature"
            ],
            [
              "tampered value",
              Effect.promise(() => forge.v1(PRICE, { tamper: { value: "600000" } })),
              pricier,
              "invalid_exact_evm_signature"
            ],
            [
              "wrong EIP-712 name",
              Effect.promise(() => forge.v1(PRICE, { domain: { name: "USD Coin" } })),
              id,
              "invalid_exact_evm_signature"
            ],
            ["not a payment", Effect.succeed("bm90IGEgcGF5bWVudA=="), id, "invalid_payment_header"]
          ]
          const buyers: Array<string> = []
          for (const [name, header, handoff, reason] of cases) {
            const buyer = newAgentId()
            buyers.push(buyer)
            const answer = yield* unlockWith(handoff, buyer, { "x-payment": yield* header })
            refusedWith(answer, reason, name)
          }
          yield* nothingRecorded(buyers)
          expect(yield* balances()).toEqual(before)
          yield* expectAuditPasses
        }))

      it.effect("the demo packet is free: its 402 offers no payment, a payment sent for it is refused, nothing moves", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const sql = yield* SqlClient.SqlClient
          const [demo] = yield* sql<
            { id: string; price: number }
          >`SELECT 'DESK-' || seq AS id, price_micro::int AS price
            FROM handoffs WHERE is_demo`
          const buyer = newAgentId()
          const sealed = yield* send(`/api/handoffs/${demo!.id}/body`, { agent: buyer })
          expect(sealed.status).toBe(402)
          expect(sealed.json).toMatchObject({ error: "payment_required", accepts: [] })
          expect(sealed.headers.get("payment-required")).toBeNull()

          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const forge = forger(chain)
          for (
            const header of [{ "x-payment": yield* Effect.promise(() => forge.v1(BigInt(demo!.price))) }, {
              "payment-signature": yield* Effect.promise(() => forge.v2(BigInt(demo!.price)))
            }]
          ) {
            const refused = yield* unlockWith(demo!.id, buyer, header)
            expect(refused.status).toBe(402)
            expect(refused.json).toMatchObject({ error: "payment_invalid", reason: "demo_is_free", accepts: [] })
          }
          yield* nothingRecorded([buyer])
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before)

          const free = yield* unlockWith(demo!.id, buyer)
          expect(free.status).toBe(200)
          expect(free.json.receipt).toMatchObject({ kind: "demo", mode: "desk" })
          yield* expectAuditPasses
        }))

      it.effect("one payment buys one unlock: reused by another identity or for another handoff it is refused", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const forge = forger(chain)
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const { id: samePrice } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const buyer = newAgentId()
          const header = yield* Effect.promise(() => forge.v2(PRICE))
          expect((yield* unlockWith(id, buyer, { "payment-signature": header })).status).toBe(200)
          const spent = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          const thief = newAgentId()
          refusedWith(yield* unlockWith(id, thief, { "payment-signature": header }), "payment_already_used")
          refusedWith(yield* unlockWith(samePrice, buyer, { "payment-signature": header }), "payment_already_used")
          yield* nothingRecorded([thief])
          expect((yield* receiptsOf(buyer)).map((_) => _.handoffId)).toEqual([id])
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(spent)

          // Sent by an identity that holds the handoff it names (bought with a payment of its own), the spent payment is
          // still refused: it was answered 200 alreadyUnlocked, as if it were the one that bought it (outside recheck).
          const holder = newAgentId()
          expect(
            (yield* unlockWith(samePrice, holder, {
              "payment-signature": yield* Effect.promise(() => forge.v2(PRICE))
            }))
              .status
          ).toBe(200)
          refusedWith(yield* unlockWith(samePrice, holder, { "payment-signature": header }), "payment_already_used")
          expect((yield* receiptsOf(holder)).map((_) => _.handoffId)).toEqual([samePrice])
          yield* expectAuditPasses
        }))

      it.effect("one payment sent at once for several unlocks buys one; the others are told so at once, not 202", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const { id: samePrice } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const [buyer, thief] = [newAgentId(), newAgentId()]
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const header = yield* Effect.promise(() => forger(chain).v2(PRICE))
          const tries = [[id, buyer], [samePrice, buyer], [id, thief], [samePrice, thief]] as const
          // The losers lost the claim's race (its unique keys) and were told "pending, retry with the same payment",
          // which then answered payment_already_used.
          const answers = yield* Effect.all(
            tries.map(([handoff, agent]) => unlockWith(handoff, agent, { "payment-signature": header })),
            { concurrency: "unbounded" }
          )
          expect(answers.map((_) => _.status).sort()).toEqual([200, 402, 402, 402])
          for (const answer of answers.filter((_) => _.status !== 200)) refusedWith(answer, "payment_already_used")
          const receipts = [...yield* receiptsOf(buyer), ...yield* receiptsOf(thief)]
          expect(receipts).toHaveLength(1)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))

      it.effect("an identity that holds the unlock is never charged again; its new authorization stays unused", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const forge = forger(chain)
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const buyer = newAgentId()
          expect((yield* unlockWith(id, buyer, { "x-payment": yield* Effect.promise(() => forge.v1(PRICE)) })).status)
            .toBe(200)
          const spent = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const second = yield* unlockWith(id, buyer, { "x-payment": yield* Effect.promise(() => forge.v1(PRICE)) })
          expect(second.json).toMatchObject({ ok: true, alreadyUnlocked: true })
          expect(second.headers.get("x-payment-response")).toBeNull()
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(spent)
          yield* expectAuditPasses
        }))

      it.effect("a settled payment resent in the other version's envelope is answered in that version's header", () =>
        Effect.gen(function*() {
          // The header followed the claim's version: a v2 client reads PAYMENT-RESPONSE only (outside recheck of 4).
          const { chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const buyer = newAgentId()
          const v1 = yield* Effect.promise(() => forger(chain).v1(PRICE))
          const paid = yield* unlockWith(id, buyer, { "x-payment": v1 })
          expect(paid.status).toBe(200)
          expect(paid.headers.get("x-payment-response")).not.toBeNull()
          const { payload } = JSON.parse(Buffer.from(v1, "base64").toString("utf8"))
          const v2 = Buffer.from(JSON.stringify({
            x402Version: 2,
            accepted: {
              scheme: "exact",
              network: `eip155:${chain.chainId}`,
              amount: PRICE.toString(),
              asset: chain.tokenAddress,
              payTo: chain.accounts.desk.address,
              maxTimeoutSeconds: 300,
              extra: { name: "USDC", version: "2" }
            },
            payload
          })).toString("base64")
          const again = yield* unlockWith(id, buyer, { "payment-signature": v2 })
          expect(again.json).toMatchObject({ ok: true, alreadyUnlocked: true })
          expect(again.headers.get("payment-response")).not.toBeNull()
          expect(again.headers.get("x-payment-response")).toBeNull()
          yield* expectAuditPasses
        }))

      it.effect("the spend cap is enforced before any money moves", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          yield* refusedOverCap(id, newAgentId())
          yield* expectAuditPasses
        }))

      it.effect("a filer paying on-chain for its own handoff pays within its cap, and the spend shows", () =>
        Effect.gen(function*() {
          const { balanceOf, chain } = yield* TestChain
          const forge = forger(chain)
          const { filer, id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const before = yield* refusedOverCap(id, filer)
          yield* send("/api/agents", { json: { id: filer, spendCapUsd: 1 }, agent: filer })
          const paid = yield* unlockWith(id, filer, { "x-payment": yield* Effect.promise(() => forge.v1(PRICE)) })
          expect(paid.status).toBe(200)
          expect(paid.json.receipt).toMatchObject({ kind: "self", mode: "x402" })
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          expect((yield* send(`/api/agents/${filer}`)).json).toMatchObject({ spentUsd: 0.3, spendCapUsd: 1 })
          yield* expectAuditPasses
        }))

      it.effect("the filer's id, public on every preview, reads no body without paying: not the body, not a free unlock", () =>
        Effect.gen(function*() {
          const { chain } = yield* TestChain
          const { id } = yield* fileHandoff(0.3, chain.accounts.filer.address)
          const preview = yield* send(`/api/handoffs/${id}`)
          const posing = preview.json.filerDid as string
          const body = yield* send(`/api/handoffs/${id}/body`, { agent: posing })
          expect(body.status).toBe(402)
          expect(body.json).toMatchObject({ ok: false, error: "payment_required" })
          expect(body.json).not.toHaveProperty("body")
          const unlock = yield* unlockWith(id, posing)
          expect(unlock.status).toBe(402)
          expect(yield* receiptsOf(posing)).toEqual([])
          expect((yield* send(`/api/handoffs/${id}/body`, { agent: posing })).status).toBe(402)
        }))
    })
  })
}
