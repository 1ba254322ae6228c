import { describe, expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { auditOf, expectAuditPasses } from "./support/Audit.ts"
import {
  fileHandoff,
  freshNonce,
  freshPayee,
  receiptsOf,
  send,
  TestChain,
  unlockUntilFinal,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { attacker } from "./support/Frontrun.ts"
import { isCallOf, isSettlementBroadcast } from "./support/RpcProxy.ts"

const PRICE = 300_000n

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 money attacks over ${backend.name}`, () => {
    layer(x402DeskOn(backend.layer), { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect("a Multicall3 front-run spends N and M elsewhere and pays the desk once with K: no unlock is backed by K", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          const { buyer, desk, other } = chain.accounts
          const forge = forger(chain)
          const evil = attacker(chain, buyer)
          const [first, second] = [yield* fileHandoff(0.3, freshPayee()), yield* fileHandoff(0.3, freshPayee())]
          const [agentN, agentM] = [newAgentId(), newAgentId()]
          const [n, m] = [freshNonce(), freshNonce()]
          const headerN = yield* Effect.promise(() => forge.v1(PRICE, { authorization: { nonce: n } }))
          const headerM = yield* Effect.promise(() => forge.v2(PRICE, { authorization: { nonce: m } }))
          const before = yield* Effect.promise(() =>
            Promise.all([balanceOf(buyer.address), balanceOf(desk.address), balanceOf(other.address)])
          )

          // The desk's two settlements wait in the mempool: the chain mines only when told to.
          yield* Effect.promise(() => evil.automine(false))
          let broadcasts = 0
          let bothSent: () => void = () => {}
          const sent = new Promise<void>((resolve) => (bothSent = resolve))
          proxy.rule = (call) =>
            isSettlementBroadcast(call)
              ? { then: async () => void (++broadcasts === 2 && bothSent()) }
              : "pass"
          const unlocks = yield* Effect.fork(
            Effect.all([
              unlockWith(first.id, agentN, { "x-payment": headerN }),
              unlockWith(second.id, agentM, { "payment-signature": headerM })
            ], {
              concurrency: 2
            })
          )
          yield* Effect.promise(() => sent)
          // Ahead of them: N and M re-signed to the buyer's second address, and K paying the desk the price once.
          const frontRun = yield* Effect.promise(() =>
            evil.frontRun(other, [
              { nonce: n, to: other.address, value: PRICE },
              { nonce: m, to: other.address, value: PRICE },
              { nonce: freshNonce(), to: desk.address, value: PRICE }
            ])
          )
          yield* Effect.promise(() => evil.mine())
          yield* Effect.promise(() => evil.automine(true))
          proxy.rule = () => "pass"
          expect((yield* Effect.promise(() => evil.receipt(frontRun))).status).toBe("success")
          const first202 = yield* Fiber.join(unlocks)
          // A settlement not mined within DESK_CONFIRM_TIMEOUT_MS is 202: the buyer retries until the outcome is known.
          const [answerN, answerM] = yield* Effect.all([
            first202[0].status === 202
              ? unlockUntilFinal(first.id, agentN, { "x-payment": headerN })
              : Effect.succeed(first202[0]),
            first202[1].status === 202
              ? unlockUntilFinal(second.id, agentM, { "payment-signature": headerM })
              : Effect.succeed(first202[1])
          ])

          // Neither authorization paid the desk: both unlocks are refused, no receipt, no body, spend given back.
          for (const [answer, agent, id] of [[answerN, agentN, first.id], [answerM, agentM, second.id]] as const) {
            expect(answer.status, JSON.stringify(answer.json)).toBe(402)
            expect(answer.json).toMatchObject({
              ok: false,
              error: "payment_invalid",
              reason: "authorization_used_elsewhere"
            })
            expect(yield* receiptsOf(agent)).toEqual([])
            expect((yield* send(`/api/handoffs/${id}/body`, { agent })).status).toBe(402)
            expect((yield* send(`/api/agents/${agent}`)).json.spentUsd).toBe(0)
          }
          const after = yield* Effect.promise(() =>
            Promise.all([balanceOf(buyer.address), balanceOf(desk.address), balanceOf(other.address)])
          )
          expect(after).toEqual([before[0] - 3n * PRICE, before[1] + PRICE, before[2] + 2n * PRICE])
          // K paid the desk, and no unlock names it: the audit notes it, and finds nothing wrong.
          const report = yield* auditOf(yield* TestChain)
          expect(report.discrepancies).toEqual([])
          expect(report.notes.filter((_) => _.includes("which no unlock named"))).toHaveLength(1)
        }))

      it.effect("a settlement mined after the confirm timeout, right after the desk read authorizationState, ends with the receipt and the body", () =>
        Effect.gen(function*() {
          const { balanceOf, chain, proxy } = yield* TestChain
          const { buyer } = chain.accounts
          const evil = attacker(chain, buyer)
          const { id } = yield* fileHandoff(0.3, freshPayee())
          const agent = newAgentId()
          const header = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
          const before = yield* Effect.promise(() => balanceOf(buyer.address))

          // The settlement sits in the mempool past DESK_CONFIRM_TIMEOUT_MS (3 s here) and is mined the moment
          // after the desk's own lookup has read the authorization as unused.
          yield* Effect.promise(() => evil.automine(false))
          let broadcast = false
          proxy.rule = (call) => {
            if (isSettlementBroadcast(call)) broadcast = true
            return broadcast && isCallOf(call, "authorizationState(address,bytes32)")
              ? {
                then: async () => {
                  proxy.rule = () => "pass"
                  await evil.mine()
                  await evil.automine(true)
                }
              }
              : "pass"
          }
          const answers: Array<number> = []
          let answer = yield* unlockWith(id, agent, header)
          answers.push(answer.status)
          expect(yield* Effect.promise(() => balanceOf(buyer.address))).toBe(before - PRICE)
          // Charged on-chain: the buyer is never told it was not. It retries after Retry-After until it has the receipt.
          for (let tries = 0; answer.status === 202 && tries < 5; tries++) {
            expect(answer.json).toMatchObject({ ok: false, error: "settlement_pending" })
            yield* Effect.sleep(`${Number(answer.headers.get("retry-after"))} seconds`)
            answer = yield* unlockWith(id, agent, header)
            answers.push(answer.status)
          }
          proxy.rule = () => "pass"
          expect(answers).not.toContain(402)
          expect(answer.status).toBe(200)
          expect(answer.json.receipt).toMatchObject({ handoffId: id, mode: "x402" })
          expect((yield* send(`/api/handoffs/${id}/body`, { agent })).status).toBe(200)
          expect(yield* receiptsOf(agent)).toHaveLength(1)
          expect(yield* Effect.promise(() => balanceOf(buyer.address))).toBe(before - PRICE)
          yield* expectAuditPasses
        }))
    })
  })
}
