import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { filing, newAgentId } from "../support/Fixtures.ts"
import { startDesk } from "../support/Process.ts"
import { backends, DATABASE_URL, freshDatabaseUrl } from "../support/Storage.ts"
import { chainScoped, eventually, freshPayee, type TestChainShape } from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { isPayoutBroadcast, isSettlementBroadcast, txHashOf } from "./support/RpcProxy.ts"

const PRICE = 500_000n

/** `npm start` exactly as an operator runs it against `npm run chain`, on one store across restarts. */
const deskEnv = ({ chain, proxy }: TestChainShape, store: Record<string, string>) => ({
  ...store,
  DESK_CHAIN_RPC_URL: proxy.url,
  DESK_NETWORK: "base-sepolia",
  DESK_ASSET_ADDRESS: chain.tokenAddress,
  DESK_ASSET_NAME: "USDC",
  DESK_ASSET_VERSION: "2",
  DESK_PAY_TO: chain.accounts.desk.address,
  DESK_WALLET_PRIVATE_KEY: chain.accounts.desk.privateKey,
  DESK_EXPLORER_URL: "",
  DESK_PAYMENT_REQUIRED: "true",
  DESK_OUTBOX_INTERVAL_MS: "300",
  DESK_CHAIN_TIMEOUT_MS: "1500",
  DESK_CONFIRM_TIMEOUT_MS: "1000"
})

/** This project's store: an embedded data directory, or a fresh PostgreSQL database. */
const store = Effect.gen(function*() {
  const backend = backends[0]!
  if (backend.name === "postgres") return { DATABASE_URL: yield* freshDatabaseUrl(DATABASE_URL!) }
  const dir = yield* Effect.acquireRelease(
    Effect.sync(() => mkdtempSync(join(tmpdir(), "handoff-x402-crash-"))),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )
  return { DESK_DATA_DIR: dir }
})

const call = (url: string, path: string, init: { json?: unknown; agent?: string; headers?: Record<string, string> } = {}) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${path}`, {
      method: init.json === undefined ? "GET" : "POST",
      headers: {
        accept: "application/json",
        ...(init.json === undefined ? {} : { "content-type": "application/json" }),
        ...(init.agent === undefined ? {} : { "x-agent-id": init.agent }),
        ...init.headers
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
    })
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: response.status, headers: response.headers, json: (await response.json()) as any }
  })

const fileWithPayee = (url: string, payee: string) =>
  Effect.gen(function*() {
    const filer = newAgentId()
    const filed = yield* call(url, "/api/handoffs", { json: filing(filer, { priceUsd: 0.5, payoutAddress: payee }), agent: filer })
    expect(filed.status).toBe(201)
    return filed.json.id as string
  })

const receipts = (url: string, buyer: string) =>
  Effect.map(call(url, `/api/receipts?payer=${buyer}`), (_) => _.json.receipts as Array<any>)

// PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
describe.skipIf(!backends[0]!.available)(`x402 crash safety over ${backends[0]!.name}: desk processes killed with SIGKILL`, () => {
  it.scopedLive("killed between settlement and receipt, between payout signing and broadcast, and before a payout was recorded", () =>
    Effect.gen(function*() {
      const testChain = yield* chainScoped()
      const { balanceOf, chain, proxy } = testChain
      const env = deskEnv(testChain, yield* store)
      const first = yield* startDesk({ env })
      const payee = freshPayee()
      const id = yield* fileWithPayee(first.url, payee)
      const buyer = newAgentId()
      const header = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
      const before = yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))

      // 1. The settlement reaches the chain, and the desk dies while it waits for the answer.
      proxy.rule = (rpc) =>
        isSettlementBroadcast(rpc) ? "forward-then-hang" : isPayoutBroadcast(rpc) ? "hang" : "pass"
      const landed = proxy.nextForwarded()
      yield* Effect.fork(call(first.url, `/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers: header }))
      const settlementTx = txHashOf((yield* Effect.promise(() => landed)).call)
      expect(yield* first.stop("SIGKILL")).toMatchObject({ signal: "SIGKILL" })
      expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)

      // 2. Without a request from the buyer, the restarted desk finds the pending claim, the chain says it was
      // paid, the receipt is written and the payout signed and stored; its broadcast never arrives: kill it there.
      proxy.rule = (rpc) => (isPayoutBroadcast(rpc) ? "hang" : "pass")
      const held = proxy.nextFault()
      const second = yield* startDesk({ env })
      const [receipt] = yield* eventually(receipts(second.url, buyer), (_) => _.length > 0, 300)
      expect(receipt).toMatchObject({ handoffId: id, mode: "x402", txHash: settlementTx, txUrl: null })
      const signedPayout = txHashOf((yield* Effect.promise(() => held)).call)
      yield* second.stop("SIGKILL")
      expect(yield* Effect.promise(() => balanceOf(payee))).toBe(0n)

      // 3. The next start re-broadcasts the stored transaction: the same hash, paid once.
      proxy.rule = () => "pass"
      const third = yield* startDesk({ env })
      const [paid] = yield* eventually(receipts(third.url, buyer), (_) => _[0]?.filerPayoutStatus === "sent", 300)
      expect(paid).toMatchObject({ receiptId: receipt.receiptId, filerPayoutTxHash: signedPayout })
      const retried = yield* call(third.url, `/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers: header })
      expect(retried.json).toMatchObject({ alreadyUnlocked: true, receipt: { receiptId: receipt.receiptId } })
      expect((yield* call(third.url, `/api/handoffs/${id}/body`, { agent: buyer })).status).toBe(200)
      expect(yield* receipts(third.url, buyer)).toHaveLength(1)
      expect(yield* Effect.promise(() => balanceOf(chain.accounts.buyer.address))).toBe(before - PRICE)
      expect(yield* Effect.promise(() => balanceOf(payee))).toBe(450_000n)

      // 4. A payout that reaches the chain while the desk dies before recording it: the stored hash is found
      // mined at the next start, so nothing is signed again (signing anew would pay the filer twice).
      const payeeB = freshPayee()
      const idB = yield* fileWithPayee(third.url, payeeB)
      proxy.rule = (rpc) => (isPayoutBroadcast(rpc) ? "forward-then-hang" : "pass")
      const broadcast = proxy.nextForwarded()
      const headerB = { "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE)) }
      expect((yield* call(third.url, `/api/handoffs/${idB}/unlock`, { json: { payer: buyer }, agent: buyer, headers: headerB })).status)
        .toBe(200)
      const payoutB = txHashOf((yield* Effect.promise(() => broadcast)).call)
      yield* third.stop("SIGKILL")
      expect(yield* Effect.promise(() => balanceOf(payeeB))).toBe(450_000n)
      proxy.rule = () => "pass"
      const fourth = yield* startDesk({ env })
      const sent = yield* eventually(
        receipts(fourth.url, buyer),
        (_) => _.find((r) => r.handoffId === idB)?.filerPayoutStatus === "sent",
        300
      )
      expect(sent.find((r) => r.handoffId === idB)?.filerPayoutTxHash).toBe(payoutB)
      yield* Effect.sleep("1 second")
      expect(yield* Effect.promise(() => balanceOf(payeeB))).toBe(450_000n)
      expect(yield* Effect.promise(() => balanceOf(payee))).toBe(450_000n)
    }), { timeout: 240_000 })
})
