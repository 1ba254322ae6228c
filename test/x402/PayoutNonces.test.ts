import { describe, expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { createPublicClient, http } from "viem"
import * as Pglite from "../../adapters/storage/Pglite.ts"
import { PayoutChannel } from "../../src/Payouts/Rail.ts"
import { freshPayee, fundDeskWallet, TestChain, x402DeskOn } from "./support/Chain.ts"
import { isPayoutPreparation, type RpcCall } from "./support/RpcProxy.ts"

/**
 * A payout step given up on (its timeout, a worker paused past it and its lease lost) left its signing running: the
 * nonce it took afterwards went to a transaction no one sent, and the wallet's counter, which never goes below the
 * last nonce it handed out, signed every later transaction one too high, queued behind the gap. Seen from outside
 * as a desk whose x402 sales all stayed 202 `settlement_pending` until it was restarted. The chain's own count
 * (anvil, past the proxy) is what the next transaction must take.
 */
describe("the payout rail's nonces", () => {
  layer(x402DeskOn(Pglite.layer({})), { timeout: 120_000, excludeTestServices: true })((it) => {
    it.effect("a signing given up on before or while it takes its nonce leaves none taken", () =>
      Effect.gen(function*() {
        const { chain, proxy } = yield* TestChain
        const rail = Option.getOrThrow(yield* PayoutChannel)
        const anvil = createPublicClient({ transport: http(chain.rpcUrl) })
        const chainNonce = Effect.promise(() =>
          anvil.getTransactionCount({ address: chain.accounts.desk.address, blockTag: "pending" })
        )
        const payee = freshPayee()
        yield* fundDeskWallet(1_000_000n)
        const payOut = (reference: string) =>
          Effect.gen(function*() {
            const signed = yield* rail.sign(payee, 1, reference)
            expect(signed.txNonce, reference).toBe(yield* chainNonce)
            yield* rail.broadcast(signed.signedTx)
            expect(yield* rail.confirm(signed), reference).toEqual({ _tag: "Confirmed" })
          })
        // A wallet that has sent nothing yet is read from the chain whatever its counter says: one payout first.
        yield* payOut("first")
        const slowly = (matches: (call: RpcCall) => boolean) => (call: RpcCall) =>
          matches(call) ? { delayMs: 1_500 } : "pass" as const

        for (
          const [when, matches] of [
            ["its preparation is out", (call: RpcCall) => isPayoutPreparation(call)],
            ["it reads the wallet's nonce", (call: RpcCall) => call.method === "eth_getTransactionCount"]
          ] as const
        ) {
          proxy.rule = slowly(matches)
          const given = yield* Effect.timeout(rail.sign(payee, 1, `given-up-${when}`), "300 millis").pipe(Effect.option)
          expect(Option.isNone(given), when).toBe(true)
          proxy.rule = () => "pass"
          // The abandoned signing's calls land meanwhile.
          yield* Effect.sleep("2500 millis")
          yield* payOut(`the next payout after one given up while ${when}`)
        }
      }))
  })
})
