import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Fiber, Option, Schema, TestServices } from "effect"
import { createHash } from "node:crypto"
import * as TestDouble from "../../adapters/settlement/TestDouble.ts"
import { Catalog } from "../../src/Catalog.ts"
import { SettlementUnavailable } from "../../src/Domain/Errors.ts"
import { FilingRequest } from "../../src/Domain/Filing.ts"
import { DeskId } from "../../src/Domain/Ids.ts"
import { Identity } from "../../src/Identity.ts"
import { Ledger } from "../../src/Ledger.ts"
import type { AuthorizationLookup, Refusal, SettleOutcome, VerifiedPayment } from "../../src/Settlement.ts"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { servicesOn } from "../support/Services.ts"
import { backends } from "../support/Storage.ts"

// The Ledger's ordering of a paid unlock (check, claim, settle, receipt), against a rail whose every answer the test
// scripts: an outage, a lost answer, a refusal. The real chain and facilitator are in test/x402.

const PRICE_MICRO = 300_000
const address = (byte: string) => `0x${byte.repeat(20)}`
const PAY_TO = address("11")
const TOKEN = address("22")
const BUYER_WALLET = address("33")

const requirement = {
  scheme: "exact",
  network: "test",
  maxAmountRequired: String(PRICE_MICRO),
  resource: "http://desk.test/api/handoffs/DESK-1/unlock",
  description: "test offer",
  mimeType: "application/json",
  payTo: PAY_TO,
  maxTimeoutSeconds: 60,
  asset: TOKEN
}

/** A well-formed payment per header value: one header, one authorization nonce. */
const paymentOf = (header: string): VerifiedPayment => {
  const nonce = `0x${createHash("sha256").update(header).digest("hex")}`
  const validBefore = Math.floor(Date.now() / 1000) + 3600
  const authorization = {
    from: BUYER_WALLET,
    to: PAY_TO,
    value: String(PRICE_MICRO),
    validAfter: "0",
    validBefore: String(validBefore),
    nonce
  }
  return {
    payerAddress: BUYER_WALLET,
    nonce,
    amountMicro: PRICE_MICRO,
    validBefore,
    paymentId: null,
    payment: {
      x402Version: 1,
      payload: {
        x402Version: 1,
        scheme: "exact",
        network: "test",
        payload: { signature: `0x${"ab".repeat(65)}`, authorization }
      },
      requirements: requirement
    }
  }
}

/** What the scripted rail answers next; each test sets the answers it relies on. */
const script: {
  blockNumber: Either.Either<bigint, SettlementUnavailable>
  verify: Option.Option<Refusal>
  settle: SettleOutcome
  lookup: AuthorizationLookup
  settleCalls: number
  /** The nonce of every lookup, in order. */
  lookups: Array<string>
  /** Nonces the chain shows paid (each by a transfer of its own), whatever `lookup` says of the others. */
  paidNonces: Set<string>
  /** Payment headers whose authorization is now too close to its expiry for a first attempt. */
  expiring: Set<string>
  /** When set, a settlement answers only once it is done (a block that takes its time). */
  settleGate: Deferred.Deferred<void> | undefined
} = {
  blockNumber: Either.right(100n),
  verify: Option.none(),
  settle: { _tag: "Unknown", detail: "not scripted" },
  lookup: { _tag: "Unknown", detail: "not scripted" },
  settleCalls: 0,
  lookups: [],
  paidNonces: new Set(),
  expiring: new Set(),
  settleGate: undefined
}

const PAID: AuthorizationLookup = {
  _tag: "Used",
  transfer: { chainId: 1, txHash: `0x${"cd".repeat(32)}`, logIndex: 0 }
}

const rail = TestDouble.layerTest({
  challenge: () => [requirement],
  check: (_offer, header, nowSeconds) =>
    nowSeconds !== undefined && script.expiring.has(header)
      ? Either.left({ reason: "authorization_expired", message: "The authorization expires within 30 seconds." })
      : Either.right(paymentOf(header)),
  blockNumber: Effect.suspend(() => script.blockNumber),
  verify: () => Effect.succeed(script.verify),
  settle: () =>
    Effect.zipRight(
      Effect.sync(() => script.settleCalls++),
      Effect.zipRight(
        script.settleGate === undefined ? Effect.void : Deferred.await(script.settleGate),
        Effect.sync(() => script.settle)
      )
    ),
  lookup: (payment) =>
    Effect.sync((): AuthorizationLookup =>
      script.lookups.push(payment.nonce) && script.paidNonces.has(payment.nonce)
        ? { _tag: "Used", transfer: { chainId: 1, txHash: payment.nonce, logIndex: 0 } }
        : script.lookup
    )
})

const decodeFiling = Schema.decodeUnknownSync(FilingRequest)

const setUp = Effect.gen(function*() {
  const filer = DeskId.make(newAgentId())
  const preview = yield* (yield* Catalog).file(
    filer,
    decodeFiling(filing(filer, { priceUsd: 0.3, reconstructUsd: 500 }))
  )
  script.blockNumber = Either.right(100n)
  script.verify = Option.none()
  script.settleCalls = 0
  return { id: preview.id as string, buyer: DeskId.make(newAgentId()) }
})

const rows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [counts] = yield* sql<{ claims: number; pending: number; receipts: number }>`SELECT
    (SELECT count(*)::int FROM settlements) AS claims,
    (SELECT count(*)::int FROM settlements WHERE status = 'pending') AS pending,
    (SELECT count(*)::int FROM receipts WHERE mode = 'x402') AS receipts`
  return counts!
}).pipe(Effect.orDie)

/** What the buyer has spent; an identity the desk never recorded has spent nothing. */
const spentUsd = (buyer: DeskId) =>
  Effect.flatMap(Identity, (_) => _.view(buyer)).pipe(
    Effect.map((_) => _.spentUsd),
    Effect.catchTag("NotFound", () => Effect.succeed(0))
  )

for (const backend of backends) {
  describe.skipIf(!backend.available)(`a paid unlock against a scripted rail over ${backend.name}`, () => {
    it.layer(servicesOn(backend.layer, rail), { timeout: 120_000 })((it) => {
      it.effect("a chain that does not answer before the claim is a 503 and writes nothing", () =>
        Effect.gen(function*() {
          const { buyer, id } = yield* setUp
          const before = yield* rows
          script.blockNumber = Either.left(new SettlementUnavailable({ message: "down", retryAfterSeconds: 5 }))
          const result = yield* Effect.either((yield* Ledger).unlock(buyer, id, buyer, Option.some("outage")))
          expect(Either.isLeft(result) && result.left._tag).toBe("SettlementUnavailable")
          expect(yield* rows).toEqual(before)
          expect(yield* spentUsd(buyer)).toBe(0)
        }))

      it.effect("a refusal by the facilitator's checks is a 402 with the challenge, and nothing is written", () =>
        Effect.gen(function*() {
          const { buyer, id } = yield* setUp
          const before = yield* rows
          script.verify = Option.some({ reason: "invalid_exact_evm_signature", message: "bad signature" })
          const result = yield* Effect.either((yield* Ledger).unlock(buyer, id, buyer, Option.some("bad-signature")))
          if (Either.isRight(result) || result.left._tag !== "PaymentInvalid") {
            return expect.fail("expected a PaymentInvalid")
          }
          expect(result.left.reason).toBe("invalid_exact_evm_signature")
          expect(result.left.accepts).toEqual([requirement])
          expect(yield* rows).toEqual(before)
          expect(script.settleCalls).toBe(0)
        }))

      it.effect("a lost settlement answer leaves the claim pending; the retry settles it from the chain, once", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const { buyer, id } = yield* setUp
          const before = yield* rows
          script.settle = { _tag: "Unknown", detail: "timed out" }
          const first = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.some("lost-answer")))
          expect(Either.isLeft(first) && first.left._tag).toBe("SettlementPending")
          expect(yield* rows).toEqual({ ...before, claims: before.claims + 1, pending: before.pending + 1 })
          // The spend is reserved while the claim is open: the cap cannot be spent twice meanwhile.
          expect(yield* spentUsd(buyer)).toBe(0.3)

          script.lookup = PAID
          const settleCalls = script.settleCalls
          const retried = yield* ledger.unlock(buyer, id, buyer, Option.some("lost-answer"))
          expect(retried.response.alreadyUnlocked).toBe(false)
          expect(Option.map(retried.settled, (_) => _.txHash)).toEqual(Option.some(`0x${"cd".repeat(32)}`))
          expect(script.settleCalls).toBe(settleCalls)
          expect(yield* rows).toEqual({
            claims: before.claims + 1,
            pending: before.pending,
            receipts: before.receipts + 1
          })

          const again = yield* ledger.unlock(buyer, id, buyer, Option.some("lost-answer"))
          expect(again.response.alreadyUnlocked).toBe(true)
          expect(yield* rows).toEqual({
            claims: before.claims + 1,
            pending: before.pending,
            receipts: before.receipts + 1
          })
          expect(yield* spentUsd(buyer)).toBe(0.3)
        }))

      it.effect("a buyer who hangs up while its payment settles: the settlement goes on, its retry gets the receipt", () =>
        // The real clock: the chain's answer comes a moment after the client has gone.
        TestServices.provideLive(Effect.gen(function*() {
          // The request's fiber was interrupted with its client (a 499), the settlement with it, after the broadcast:
          // the buyer was charged and its retries answered 202 until the claim's lease lapsed, minutes later.
          const ledger = yield* Ledger
          const { buyer, id } = yield* setUp
          const before = yield* rows
          const gate = yield* Deferred.make<void>()
          script.settleGate = gate
          script.settle = { _tag: "Settled", transfer: { chainId: 1, txHash: `0x${"ef".repeat(32)}`, logIndex: 0 } }
          const request = yield* Effect.fork(ledger.unlock(buyer, id, buyer, Option.some("hung-up")))
          while (script.settleCalls === 0) yield* Effect.sleep("10 millis")
          // The chain answers a moment after the client has gone.
          yield* Effect.fork(Effect.delay(Deferred.succeed(gate, undefined), "200 millis"))
          yield* Fiber.interrupt(request)
          script.settleGate = undefined
          // Decided on its own, with nobody waiting for it: its receipt is written.
          let receipts = before.receipts
          for (let waited = 0; receipts === before.receipts && waited < 3_000; waited += 20) {
            yield* Effect.sleep("20 millis")
            receipts = (yield* rows).receipts
          }
          expect(receipts).toBe(before.receipts + 1)
          const retried = yield* ledger.unlock(buyer, id, buyer, Option.some("hung-up"))
          expect(retried.response.alreadyUnlocked).toBe(true)
          expect(Option.map(retried.settled, (_) => _.txHash)).toEqual(Option.some(`0x${"ef".repeat(32)}`))
          expect(script.settleCalls).toBe(1)
        })))

      it.effect("a retry of a pending payment near its expiry is its claim's 202, then its receipt, never a new 402", () =>
        Effect.gen(function*() {
          // A fresh 402 invited a second payment for one the chain charged a moment later (outside recheck of issue 4).
          const ledger = yield* Ledger
          const { buyer, id } = yield* setUp
          script.settle = { _tag: "Unknown", detail: "not mined yet" }
          script.lookup = { _tag: "Unknown", detail: "not mined yet" }
          const first = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.some("late")))
          expect(Either.isLeft(first) && first.left._tag).toBe("SettlementPending")

          script.expiring.add("late")
          const retried = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.some("late")))
          expect(Either.isLeft(retried) && retried.left._tag).toBe("SettlementPending")
          const { nonce } = paymentOf("late")
          script.paidNonces.add(nonce)
          const settled = yield* ledger.unlock(buyer, id, buyer, Option.some("late"))
          expect(Option.map(settled.settled, (_) => _.txHash)).toEqual(Option.some(nonce))
          // Replayed after, still close to its expiry: the receipt with its settlement.
          const replayed = yield* ledger.unlock(buyer, id, buyer, Option.some("late"))
          expect(replayed.response.alreadyUnlocked).toBe(true)
          expect(Option.isSome(replayed.settled)).toBe(true)

          // A payment never claimed, as close to its expiry, is refused as before.
          const other = yield* setUp
          script.expiring.add("never-claimed")
          const refused = yield* Effect.either(
            ledger.unlock(other.buyer, other.id, other.buyer, Option.some("never-claimed"))
          )
          expect(Either.isLeft(refused) && refused.left).toMatchObject({
            _tag: "PaymentInvalid",
            reason: "authorization_expired"
          })
        }))

      it.effect("a first attempt the facilitator refused fails the claim and gives the reserved spend back", () =>
        Effect.gen(function*() {
          const { buyer, id } = yield* setUp
          const before = yield* rows
          script.settle = { _tag: "Refused", reason: "invalid_exact_evm_signature", message: "bad signature" }
          const result = yield* Effect.either((yield* Ledger).unlock(buyer, id, buyer, Option.some("refused")))
          expect(Either.isLeft(result) && result.left._tag).toBe("PaymentInvalid")
          expect(yield* rows).toEqual({ ...before, claims: before.claims + 1 })
          expect(yield* spentUsd(buyer)).toBe(0)
        }))

      it.effect("claims the chain never decides do not keep the reconciler from a charged buyer's claim behind them", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const sql = yield* SqlClient.SqlClient
          const { buyer, id } = yield* setUp
          // More undecided claims than one round takes (20): each attempt is Unknown, the chain shows them unused.
          script.settle = { _tag: "Unknown", detail: "invalid_exact_evm_insufficient_balance" }
          script.lookup = { _tag: "Unused", expired: false }
          for (let i = 0; i < 25; i++) {
            const stuck = DeskId.make(newAgentId())
            const answer = yield* Effect.either(ledger.unlock(stuck, id, stuck, Option.some(`undecided-${i}`)))
            expect(Either.isLeft(answer) && answer.left._tag).toBe("SettlementPending")
          }
          // The last claim: its buyer was charged on-chain, the answer was lost.
          const charged = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.some("charged-late")))
          expect(Either.isLeft(charged) && charged.left._tag).toBe("SettlementPending")
          script.paidNonces.add(paymentOf("charged-late").nonce)
          // Two rounds of 20 reach all 26 claims, each taken once before any is taken again.
          yield* ledger.reconcile
          yield* ledger.reconcile
          const [claim] = yield* sql<{ status: string }>`SELECT status FROM settlements
            WHERE nonce = ${paymentOf("charged-late").nonce}`
          expect(claim!.status).toBe("settled")
          const unlocked = yield* ledger.unlock(buyer, id, buyer, Option.none())
          expect(unlocked.response.alreadyUnlocked).toBe(true)
        }))

      it.effect("a claim still undecided 10 minutes past its authorization's expiry is tried once an hour", () =>
        Effect.gen(function*() {
          const ledger = yield* Ledger
          const sql = yield* SqlClient.SqlClient
          const { buyer, id } = yield* setUp
          script.settle = { _tag: "Unknown", detail: "not seen yet" }
          // Its nonce used on-chain, the use never found (a nonce spent long before the claim).
          script.lookup = { _tag: "Unknown", detail: "authorization used by block 90, its event not found yet" }
          const nonce = paymentOf("spent-long-ago").nonce
          const answer = yield* Effect.either(ledger.unlock(buyer, id, buyer, Option.some("spent-long-ago")))
          expect(Either.isLeft(answer) && answer.left._tag).toBe("SettlementPending")
          const tried = (ago: string) =>
            sql`UPDATE settlements SET valid_before = extract(epoch FROM now())::bigint - 601,
              updated_at = now() - ${ago}::interval WHERE nonce = ${nonce}`
          const lookupsOf = () => script.lookups.filter((_) => _ === nonce).length

          yield* tried("59 minutes")
          yield* ledger.reconcile
          expect(lookupsOf()).toBe(0)
          yield* tried("61 minutes")
          yield* ledger.reconcile
          expect(lookupsOf()).toBe(1)
          // Tried just now: not again before an hour.
          yield* ledger.reconcile
          expect(lookupsOf()).toBe(1)
          const [claim] = yield* sql<{ status: string }>`SELECT status FROM settlements WHERE nonce = ${nonce}`
          expect(claim!.status).toBe("pending")
        }))
    })
  })
}
