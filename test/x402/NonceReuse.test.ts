import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createPublicClient, getAbiItem, http, parseAbi } from "viem"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { auditOf } from "./support/Audit.ts"
import { fileHandoff, receiptsOf, send, TestChain, unlockUntilFinal, unlockWith, x402DeskOn } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { isSettlementBroadcast } from "./support/RpcProxy.ts"

const PRICE = 200_000n

const usedEvent = getAbiItem({
  abi: parseAbi(["event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)"]),
  name: "AuthorizationUsed"
})

/**
 * EIP-3009 nonces are unique per authorizing wallet. A buyer's nonce is public once its settlement is mined; while
 * its receipt is still to be written (a 202), another wallet may sign an authorization of its own under that nonce.
 * Before migration 0022 a receipt's nonce was unique across wallets: the attacker's cheap purchase took it, and the
 * buyer's claim was failed as a transfer already used, the buyer charged and told it was not (an attack review).
 */
for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 nonces per wallet over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("a buyer charged on-chain gets its receipt though another wallet's authorization reuses its nonce", () =>
        Effect.gen(function*() {
          const testChain = yield* TestChain
          const { balanceOf, chain, proxy } = testChain
          const forge = forger(chain)
          const { id } = yield* fileHandoff(0.2, chain.accounts.filer.address)
          const victim = newAgentId()
          const victimHeader = { "payment-signature": yield* Effect.promise(() => forge.v2(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

          // The victim's settlement is mined, but the desk's answer is lost: 202, the claim stays pending.
          proxy.rule = (call) => (isSettlementBroadcast(call) ? "lose-answer-then-down" : "pass")
          const pending = yield* unlockWith(id, victim, victimHeader).pipe(
            Effect.ensuring(Effect.sync(() => {
              proxy.rule = () => "pass"
              proxy.down = false
            }))
          )
          expect(pending.status).toBe(202)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)

          // The attacker reads the victim's nonce from the token's public AuthorizationUsed log ...
          const reader = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })
          const logs = yield* Effect.promise(() =>
            reader.getLogs({
              address: chain.tokenAddress,
              event: usedEvent,
              args: { authorizer: chain.accounts.buyer.address },
              fromBlock: 0n
            })
          )
          const stolenNonce = logs.at(-1)!.args.nonce!
          // ... and buys a cheap handoff with an authorization of its own wallet under that nonce: a fair purchase.
          const { id: cheap } = yield* fileHandoff(0.01)
          const attacker = newAgentId()
          const attackerHeader = {
            "x-payment": yield* Effect.promise(() =>
              forge.v1(10_000n, {
                signer: chain.accounts.other.privateKey,
                authorization: { from: chain.accounts.other.address, nonce: stolenNonce }
              })
            )
          }
          expect((yield* unlockWith(cheap, attacker, attackerHeader)).status).toBe(200)

          // The victim retries the same request, as the 202 told it to: it was charged, so it gets its unlock.
          const retried = yield* unlockUntilFinal(id, victim, victimHeader)
          expect(retried.status, JSON.stringify(retried.json)).toBe(200)
          expect(yield* receiptsOf(victim)).toHaveLength(1)
          expect((yield* send(`/api/handoffs/${id}/body`, { agent: victim })).status).toBe(200)
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
          expect((yield* auditOf(testChain)).discrepancies).toEqual([])
        }))
    })
  })
}
