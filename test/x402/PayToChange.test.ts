import { describe, expect, layer } from "@effect/vitest"
import { Effect, Either, Layer, Option } from "effect"
import * as X402 from "../../adapters/settlement/X402.ts"
import { chainScoped, nowSeconds, TestChain } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"

const PRICE = 200_000n
const OFFER = {
  handoffId: "DESK-1",
  title: "a handoff",
  teaser: "its teaser",
  priceMicro: Number(PRICE),
  resource: "http://desk.test/api/handoffs/DESK-1/unlock"
}

/**
 * A claim keeps the requirements its buyer paid against. A desk restarted with another DESK_PAY_TO (or a second
 * desk of the database configured with one) still has claims paid to the old address to settle: the chain's answer
 * is read against the claim's payTo and asset, not the desk's current ones. Read against the current payTo, a buyer
 * charged on-chain was proved "not paid" (authorization_used_elsewhere): claim failed, no receipt.
 */
describe("a desk whose payTo changed", () => {
  layer(Layer.scoped(TestChain, chainScoped()), { timeout: 120_000 })((it) => {
    it.effect("finds the payments made to its old payTo paid, v1 and v2", () =>
      Effect.gen(function*() {
        const { chain, settings } = yield* TestChain
        const forge = forger(chain)
        const before = (yield* X402.make(settings)).rail
        const after = (yield* X402.make({ ...settings, payTo: chain.accounts.other.address })).rail
        for (
          const header of [
            yield* Effect.promise(() => forge.v1(PRICE)),
            yield* Effect.promise(() => forge.v2(PRICE))
          ]
        ) {
          const payment = Either.getOrThrow(before.check(OFFER, header, nowSeconds()))
          const fromBlock = yield* before.blockNumber
          expect(yield* before.verify(payment)).toEqual(Option.none())
          const settled = yield* before.settle(payment, fromBlock)
          expect(settled._tag).toBe("Settled")
          const found = yield* after.lookup(payment, fromBlock)
          expect(found._tag).toBe("Used")
          expect(found).toEqual(yield* before.lookup(payment, fromBlock))
        }
      }))
  })
})
