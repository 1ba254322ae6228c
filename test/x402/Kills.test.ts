import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { type Address, toHex } from "viem"
import { freshBundle } from "../../scripts/bundle.mjs"
import { newAgentId } from "../support/Fixtures.ts"
import { type DeskProcess, startDesk } from "../support/Process.ts"
import { backends } from "../support/Storage.ts"
import { chainScoped, eventually, freshNonce, freshPayee, type TestChainShape } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { call, deskEnv, fileWith, processStore, receiptsAt, runAudit } from "./support/Processes.ts"
import {
  carries,
  type Fault,
  isCallOf,
  isPayoutBroadcast,
  isPayoutPreparation,
  isSettlementBroadcast,
  type RpcCall,
  txHashOf
} from "./support/RpcProxy.ts"
import { transfersCarrying } from "./support/Transfers.ts"

const PRICE = 500_000n
const SHARE = 450_000n

type Matcher = (rpc: RpcCall) => boolean

/** Matches `then` only after `first` was seen: a step named by the call that follows another. */
const after = (first: Matcher, then: (rpc: RpcCall, firstCall: RpcCall) => boolean): Matcher => {
  let seen: RpcCall | undefined
  return (rpc) => {
    if (seen !== undefined && then(rpc, seen)) return true
    if (seen === undefined && first(rpc)) seen = rpc
    return false
  }
}

/**
 * Where the desk dies, named by a chain call of this scenario's own payment (its nonce) or payout (its
 * reference): before the call reaches the chain (`hang`), or once the chain has taken it (`forward-then-hang`).
 */
interface KillPoint {
  readonly name: string
  readonly stage: "unlock" | "payout"
  readonly at: (mark: string) => Matcher
  readonly fault: "hang" | "forward-then-hang"
}

const own = (mark: string, matches: Matcher): Matcher => (rpc) => matches(rpc) && carries(rpc, mark)

/** The steps of a paid unlock, then of its payout, in the order the desk takes them. */
const KILL_POINTS: ReadonlyArray<KillPoint> = [
  {
    name: "verifying the payment: nothing recorded yet",
    stage: "unlock",
    at: (nonce) =>
      own(
        nonce,
        (_) =>
          isCallOf(
            _,
            "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)"
          )
      ),
    fault: "hang"
  },
  {
    name: "claimed, the settlement not yet broadcast",
    stage: "unlock",
    at: (nonce) => own(nonce, isSettlementBroadcast),
    fault: "hang"
  },
  {
    name: "settlement broadcast, its answer lost",
    stage: "unlock",
    at: (nonce) => own(nonce, isSettlementBroadcast),
    fault: "forward-then-hang"
  },
  {
    name: "settled, reading authorizationState",
    stage: "unlock",
    at: (nonce) =>
      after(own(nonce, isSettlementBroadcast), own(nonce, (_) => isCallOf(_, "authorizationState(address,bytes32)"))),
    fault: "hang"
  },
  {
    name: "settled, reading its transfer's logs: no receipt yet",
    stage: "unlock",
    at: (nonce) => after(own(nonce, isSettlementBroadcast), own(nonce, (_) => _.method === "eth_getLogs")),
    fault: "hang"
  },
  {
    name: "receipt written, preparing the payout",
    stage: "payout",
    at: (ref) => own(ref, (_) => isPayoutPreparation(_)),
    fault: "hang"
  },
  {
    name: "payout prepared, drawing its nonce: not signed or stored",
    stage: "payout",
    at: (ref) => after(own(ref, (_) => isPayoutPreparation(_)), (_) => _.method === "eth_getTransactionCount"),
    fault: "hang"
  },
  {
    name: "payout signed and stored, not broadcast",
    stage: "payout",
    at: (ref) => own(ref, (_) => isPayoutBroadcast(_)),
    fault: "hang"
  },
  {
    name: "payout broadcast, its answer lost",
    stage: "payout",
    at: (ref) => own(ref, (_) => isPayoutBroadcast(_)),
    fault: "forward-then-hang"
  },
  {
    name: "payout broadcast, waiting for it to be mined: not recorded sent",
    stage: "payout",
    at: (ref) =>
      after(
        own(ref, (_) => isPayoutBroadcast(_)),
        (rpc, broadcast) => rpc.method === "eth_getTransactionReceipt" && carries(rpc, txHashOf(broadcast))
      ),
    fault: "hang"
  }
]

interface Scenario {
  readonly point: KillPoint
  readonly id: string
  readonly filer: string
  readonly buyer: string
  readonly payee: Address
  readonly header: Record<string, string>
}

/**
 * Arms the proxy to fault this scenario's matching call once, and resolves when the desk has made that call
 * (and, for `forward-then-hang`, the chain has taken it).
 */
const arm = ({ proxy }: TestChainShape, point: KillPoint, mark: string) => {
  const matches = point.at(mark)
  let fired = false
  let reached: () => void = () => {}
  const done = new Promise<void>((resolve) => (reached = resolve))
  proxy.rule = (rpc): Fault => {
    if (fired || !matches(rpc)) return "pass"
    fired = true
    if (point.fault === "hang") reached()
    else void proxy.nextForwarded().then(() => reached())
    return point.fault
  }
  return done
}

// On PostgreSQL (DATABASE_URL): a killed desk is back in a few seconds. An embedded-store desk takes 20-30 s to
// reopen its data directory after a SIGKILL on a busy 2-core machine, 11 restarts here; test/x402/Crash.test.ts
// kills PGlite desks at the settlement and payout steps that touch the store. Reported as skipped on PGlite.
describe.skipIf(backends[0]!.name !== "postgres" || !backends[0]!.available)(
  `x402 over ${backends[0]!.name}: a desk killed with SIGKILL between every two steps`,
  () => {
    it.scopedLive(
      "each kill, then a restart: every charged buyer gets one receipt and the body, every share one transfer, the audit passes",
      () =>
        Effect.gen(function*() {
          const testChain = yield* chainScoped()
          const { balanceOf, chain, proxy } = testChain
          const env = deskEnv(testChain, proxy.url, yield* processStore)
          // As `npm start` runs it: the bundle starts in about a second, where tsx takes several.
          yield* Effect.promise(() => freshBundle())
          const start = startDesk({ env, command: "start" })
          let desk: DeskProcess = yield* start
          const kill = (name: string) =>
            Effect.gen(function*() {
              expect(yield* desk.stop("SIGKILL"), name).toMatchObject({ signal: "SIGKILL" })
              proxy.rule = () => "pass"
              desk = yield* start
            })
          const buyerBefore = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))
          const scenarios: Array<Scenario> = []

          // One scenario per kill point, one after the other: each desk dies at its point and a new one starts at once,
          // so earlier scenarios are still being resolved (and killed again) while later ones run.
          for (const point of KILL_POINTS) {
            const buyer = newAgentId()
            const nonce = freshNonce()
            const header = {
              "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE, { authorization: { nonce } }))
            }
            const payee = freshPayee()
            const unlock = (url: string) =>
              call(url, `/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers: header })
            // A payout kill point needs the receipt id first: the filer registers its address only after the sale.
            const { filer, id } = yield* fileWith(desk.url, 0.5, point.stage === "unlock" ? payee : undefined)
            scenarios.push({ point, id, filer, buyer, payee, header })
            if (point.stage === "unlock") {
              const reached = arm(testChain, point, nonce)
              const unlocking = yield* Effect.fork(unlock(desk.url))
              yield* Effect.promise(() => reached)
              yield* kill(point.name)
              yield* Fiber.interrupt(unlocking)
            } else {
              const bought = yield* eventually(unlock(desk.url), (_) => _.status !== 202, 300)
              expect(bought.status, point.name).toBe(200)
              const reached = arm(testChain, point, toHex(bought.json.receipt.receiptId as string))
              expect(
                (yield* call(desk.url, "/api/agents", { json: { id: filer, payoutAddress: payee }, agent: filer }))
                  .status
              ).toBe(200)
              yield* Effect.promise(() => reached)
              yield* kill(point.name)
            }
          }

          // Every buyer retries its unlock (as an x402 client does after a lost answer) until it has one.
          for (const { buyer, header, id, point } of scenarios) {
            const answer = yield* eventually(
              call(desk.url, `/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers: header }),
              (_) => _.status !== 202,
              600
            )
            expect(answer.status, `${point.name}: ${JSON.stringify(answer.json)}`).toBe(200)
            expect((yield* call(desk.url, `/api/handoffs/${id}/body`, { agent: buyer })).status, point.name).toBe(200)
          }
          for (const { buyer, payee, point } of scenarios) {
            const [paid] = yield* eventually(
              receiptsAt(desk.url, buyer),
              (_) => _[0]?.filerPayoutStatus === "sent",
              600
            )
            expect(yield* receiptsAt(desk.url, buyer), point.name).toHaveLength(1)
            const transfers = yield* Effect.promise(() =>
              transfersCarrying(chain, chain.accounts.desk.address, paid.receiptId)
            )
            expect(transfers.map((_) => _.txHash), point.name).toEqual([paid.filerPayoutTxHash])
            expect(yield* Effect.promise(() => balanceOf(payee)), point.name).toBe(SHARE)
          }
          // Each buyer paid once: no payment left without its receipt, none settled twice.
          expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(
            buyerBefore - PRICE * BigInt(scenarios.length)
          )

          // The embedded store takes one process at a time: the audit runs once the desk is stopped.
          yield* desk.stop()
          const audited = yield* runAudit(env)
          expect(audited.output).toContain("audit: the ledger and the chain agree")
          expect(audited.code).toBe(0)
        }),
      { timeout: 600_000 }
    )
  }
)
