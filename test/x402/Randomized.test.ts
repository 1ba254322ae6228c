import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Option } from "effect"
import type { Address } from "viem"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Ledger } from "../../src/Ledger.ts"
import { Payouts } from "../../src/Payouts.ts"
import { PayoutChannel } from "../../src/Payouts/Rail.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import { auditOf } from "./support/Audit.ts"
import { fileHandoff, freshPayee, send, TestChain, unlockWith, x402DeskOn } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import {
  carries,
  type Fault,
  isCallOf,
  isPayoutBroadcast,
  isPayoutPreparation,
  isSettlementBroadcast,
  type RpcCall
} from "./support/RpcProxy.ts"

/** Fixed seeds: a failure names its seed, and the same seed replays the same schedule. */
const SEEDS = Array.from({ length: Number(process.env["RANDOM_SCHEDULES"] ?? 50) }, (_, i) => 1_000 + i)
const RPC_TIMEOUT_MS = 1_000

const mulberry32 = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

type Chaos =
  | "none"
  | "refuse-broadcast"
  | "lose-broadcast"
  | "duplicate-broadcast"
  | "slow-broadcast"
  | "drop-lookup"
  | "kill-after-broadcast"
  | "kill-at-lookup"
type PayoutChaos = "none" | "refuse" | "lose" | "duplicate" | "kill-at-preparation" | "kill-after-broadcast"

type Step =
  | {
    readonly kind: "unlock"
    readonly buyer: number
    readonly handoff: number
    readonly chaos: Chaos
    readonly v2: boolean
  }
  | { readonly kind: "retry"; readonly which: number }
  | { readonly kind: "twice"; readonly buyer: number; readonly handoff: number }
  | { readonly kind: "worker"; readonly chaos: PayoutChaos }
  | { readonly kind: "reconcile" }
  | { readonly kind: "register" }

const schedule = (seed: number): ReadonlyArray<Step> => {
  const random = mulberry32(seed)
  const pick = <A>(items: ReadonlyArray<A>) => items[Math.floor(random() * items.length)]!
  const chaos: ReadonlyArray<Chaos> = [
    "none",
    "none",
    "refuse-broadcast",
    "lose-broadcast",
    "duplicate-broadcast",
    "slow-broadcast",
    "drop-lookup",
    "kill-after-broadcast",
    "kill-at-lookup"
  ]
  const payoutChaos: ReadonlyArray<PayoutChaos> = [
    "none",
    "refuse",
    "lose",
    "duplicate",
    "kill-at-preparation",
    "kill-after-broadcast"
  ]
  return Array.from({ length: 5 + Math.floor(random() * 4) }, (): Step => {
    const roll = random()
    if (roll < 0.45) {
      return {
        kind: "unlock",
        buyer: Math.floor(random() * 3),
        handoff: Math.floor(random() * 3),
        chaos: pick(chaos),
        v2: random() < 0.5
      }
    }
    if (roll < 0.6) return { kind: "retry", which: Math.floor(random() * 8) }
    if (roll < 0.7) return { kind: "twice", buyer: Math.floor(random() * 3), handoff: Math.floor(random() * 3) }
    if (roll < 0.85) return { kind: "worker", chaos: pick(payoutChaos) }
    if (roll < 0.95) return { kind: "reconcile" }
    return { kind: "register" }
  })
}

const once = (matches: (rpc: RpcCall) => boolean, fault: Fault) => {
  let done = false
  return (rpc: RpcCall): Fault => {
    if (done || !matches(rpc)) return "pass"
    done = true
    return fault
  }
}

for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 randomized faults over ${backend.name}`, () => {
    layer(
      x402DeskOn(backend.layer, {
        settings: (base) => ({ ...base, rpcTimeoutMs: RPC_TIMEOUT_MS, confirmTimeoutMs: 1_000 })
      }),
      { timeout: 120_000, excludeTestServices: true }
    )((it) => {
      for (const seed of SEEDS) {
        it.effect(`schedule ${seed}: unlocks, retries, duplicates, RPC faults, kills and worker runs keep the money exact`, () =>
          Effect.gen(function*() {
            const { balanceOf, chain, proxy } = yield* TestChain
            const sql = yield* SqlClient.SqlClient
            const ledger = yield* Ledger
            const payouts = yield* Payouts
            const rail = Option.getOrThrow(yield* PayoutChannel)
            const forge = forger(chain)
            const wallets = () =>
              Effect.promise(() =>
                Promise.all([balanceOf(chain.accounts.buyer.address), balanceOf(chain.accounts.desk.address)])
              )
            const [buyerBefore, deskBefore] = yield* wallets()

            // Three handoffs (the last one's filer registers a payout address only later), three buyers.
            const payees: Array<Address> = [freshPayee(), freshPayee(), freshPayee()]
            const prices = [0.2, 0.35, 0.000001]
            const handoffs = yield* Effect.all(
              [0, 1, 2].map((i) => fileHandoff(prices[i]!, i === 2 ? undefined : payees[i]))
            )
            const buyers = [newAgentId(), newAgentId(), newAgentId()]
            const sent: Array<
              { readonly buyer: string; readonly id: string; readonly header: Record<string, string> }
            > = []

            /** The desk (in this process) dies at the first call `matches` sees: its fiber is interrupted, as if killed. */
            const killedAt = <A, E>(effect: Effect.Effect<A, E>, matches: (rpc: RpcCall) => boolean) =>
              Effect.gen(function*() {
                const reached = yield* Deferred.make<void>()
                proxy.rule = once(matches, {
                  then: async () => void Effect.runSync(Deferred.succeed(reached, undefined))
                })
                const fiber = yield* Effect.fork(Effect.either(effect))
                yield* Effect.raceFirst(Deferred.await(reached), Fiber.await(fiber))
                yield* Fiber.interrupt(fiber)
                // A new process would start with a fresh nonce counter.
                yield* rail.resetNonces
              })

            for (const step of schedule(seed)) {
              proxy.rule = () => "pass"
              switch (step.kind) {
                case "unlock": {
                  const buyer = buyers[step.buyer]!
                  const { id } = handoffs[step.handoff]!
                  const price = BigInt(Math.round(prices[step.handoff]! * 1_000_000))
                  const payment = yield* Effect.promise(() => (step.v2 ? forge.v2(price) : forge.v1(price)))
                  const header: Record<string, string> = step.v2
                    ? { "payment-signature": payment }
                    : { "x-payment": payment }
                  sent.push({ buyer, id, header })
                  const mine = (rpc: RpcCall) =>
                    carries(rpc, JSON.parse(Buffer.from(payment, "base64").toString()).payload.authorization.nonce)
                  const lookup = (rpc: RpcCall) => mine(rpc) && isCallOf(rpc, "authorizationState(address,bytes32)")
                  const broadcast = (rpc: RpcCall) => mine(rpc) && isSettlementBroadcast(rpc)
                  switch (step.chaos) {
                    case "kill-after-broadcast":
                    case "kill-at-lookup":
                      yield* killedAt(
                        ledger.unlock(DeskId.make(buyer), id, DeskId.make(buyer), Option.some(payment)),
                        step.chaos === "kill-at-lookup" ? lookup : broadcast
                      )
                      continue
                    case "refuse-broadcast":
                      proxy.rule = once(broadcast, "refuse")
                      break
                    case "lose-broadcast":
                      proxy.rule = once(broadcast, "lose-answer")
                      break
                    case "duplicate-broadcast":
                      proxy.rule = once(broadcast, "duplicate")
                      break
                    case "slow-broadcast":
                      proxy.rule = once(broadcast, { delayMs: RPC_TIMEOUT_MS + 200 })
                      break
                    case "drop-lookup":
                      proxy.rule = once(lookup, "drop")
                      break
                  }
                  yield* unlockWith(id, buyer, header)
                  break
                }
                case "retry": {
                  const earlier = sent[step.which % Math.max(sent.length, 1)]
                  if (earlier !== undefined) yield* unlockWith(earlier.id, earlier.buyer, earlier.header)
                  break
                }
                case "twice": {
                  const buyer = buyers[step.buyer]!
                  const { id } = handoffs[step.handoff]!
                  const header = {
                    "x-payment": yield* Effect.promise(() =>
                      forge.v1(BigInt(Math.round(prices[step.handoff]! * 1_000_000)))
                    )
                  }
                  sent.push({ buyer, id, header })
                  yield* Effect.all([unlockWith(id, buyer, header), unlockWith(id, buyer, header)], { concurrency: 2 })
                  break
                }
                case "worker":
                  switch (step.chaos) {
                    case "kill-at-preparation":
                      yield* killedAt(payouts.runOnce, (_) => isPayoutPreparation(_))
                      continue
                    case "kill-after-broadcast":
                      yield* killedAt(payouts.runOnce, (_) => isPayoutBroadcast(_))
                      continue
                    case "refuse":
                      proxy.rule = once((_) => isPayoutBroadcast(_), "refuse")
                      break
                    case "lose":
                      proxy.rule = once((_) => isPayoutBroadcast(_), "lose-answer")
                      break
                    case "duplicate":
                      proxy.rule = once((_) => isPayoutBroadcast(_), "duplicate")
                      break
                  }
                  yield* payouts.runOnce
                  break
                case "reconcile":
                  yield* ledger.reconcile
                  break
                case "register":
                  yield* send("/api/agents", {
                    json: { id: handoffs[2]!.filer, payoutAddress: payees[2] },
                    agent: handoffs[2]!.filer
                  })
                  break
              }
            }

            // Reconciliation: the faults stop, every lease is let go (as if its holder died long ago), and the
            // reconciler and the payout worker run until nothing is in flight.
            proxy.rule = () => "pass"
            const registered = yield* send("/api/agents", {
              json: { id: handoffs[2]!.filer, payoutAddress: payees[2] },
              agent: handoffs[2]!.filer
            })
            expect(registered.status, JSON.stringify(registered.json)).toBe(200)
            const inFlight = Effect.gen(function*() {
              yield* sql`UPDATE settlements SET lease_until = NULL WHERE status = 'pending'`
              yield* sql`UPDATE payouts SET next_attempt_at = now() WHERE status IN ('pending', 'signed', 'failed')`
              yield* ledger.reconcile
              yield* payouts.runOnce
              const [left] = yield* sql<{ claims: number; payouts: number }>`SELECT
                (SELECT count(*)::int FROM settlements WHERE status = 'pending') AS claims,
                (SELECT count(*)::int FROM payouts WHERE status <> 'sent') AS payouts`
              return left!
            }).pipe(Effect.orDie)
            let left = yield* inFlight
            for (let round = 0; (left.claims > 0 || left.payouts > 0) && round < 40; round++) left = yield* inFlight
            expect(left, `seed ${seed}: still in flight`).toEqual({ claims: 0, payouts: 0 })

            // The invariants, against this schedule's rows and the chain.
            const receipts = yield* sql<
              { receipt_id: string; price_micro: string; filer_micro: string; payer: string; mode: string }
            >`
              SELECT r.receipt_id, r.price_micro::text, r.filer_micro::text, r.payer, r.mode FROM receipts r
              WHERE r.payer IN ${sql.in(buyers)}`.pipe(Effect.orDie)
            const paidIn = receipts.filter((_) => _.mode === "x402").reduce((sum, _) => sum + BigInt(_.price_micro), 0n)
            const shares = receipts.reduce((sum, _) => sum + BigInt(_.filer_micro), 0n)
            const [buyerAfter, deskAfter] = yield* wallets()
            // No buyer whose USDC moved is left without a receipt, and no receipt without its payment.
            expect(buyerBefore - buyerAfter, `seed ${seed}: charged vs receipts`).toBe(paidIn)
            // Every share due was sent exactly once: the desk kept its fee and nothing else.
            expect(deskAfter - deskBefore, `seed ${seed}: desk wallet vs ledger`).toBe(paidIn - shares)
            const payeeTotal = (yield* Effect.promise(() => Promise.all(payees.map(balanceOf)))).reduce(
              (a, b) => a + b,
              0n
            )
            expect(payeeTotal, `seed ${seed}: filers paid`).toBe(shares)
            // Spend stays reserved only for what was bought: every failed claim gave its reservation back.
            const spent = yield* sql<{ id: string; spent_micro: string }>`SELECT id, spent_micro::text FROM agents
              WHERE id IN ${sql.in(buyers)}`.pipe(Effect.orDie)
            for (const agent of spent) {
              const bought = receipts.filter((_) => _.payer === agent.id).reduce(
                (sum, _) => sum + BigInt(_.price_micro),
                0n
              )
              expect(BigInt(agent.spent_micro), `seed ${seed}: spend of ${agent.id}`).toBe(bought)
            }
            const report = yield* auditOf(yield* TestChain)
            expect(report.discrepancies, `seed ${seed}: audit`).toEqual([])
          }))
      }
    })
  })
}
