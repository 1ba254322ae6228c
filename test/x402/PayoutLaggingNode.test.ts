import { afterAll, describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { createPublicClient, type Hex, http, toHex } from "viem"
import { Payouts } from "../../src/Payouts.ts"
import { newAgentId } from "../support/Fixtures.ts"
import { backends } from "../support/Storage.ts"
import {
  eventually,
  fileHandoff,
  freshPayee,
  fundDeskWallet,
  receiptsOf,
  TestChain,
  unlockWith,
  x402DeskOn
} from "./support/Chain.ts"
import { forger } from "./support/Forge.ts"
import { isPayoutBroadcast, txHashOf } from "./support/RpcProxy.ts"

const PRICE = 200_000n

/**
 * An RPC in front of the suite's own proxy that can answer like a load-balanced provider with two nodes, one of
 * them a block behind (it has neither mined nor seen the payout `hash`). Nothing is invented: the first
 * eth_blockNumber and the nonce at that block come from the up-to-date node; the receipt and the transaction by
 * hash, and every later eth_blockNumber (so the log scan up to that head), from the lagging node.
 */
interface Lag {
  readonly hash: string
  readonly head: bigint
  blockCalls: number
}
const lagging = await (async () => {
  const state: { upstream: string; lag: Lag | null } = { upstream: "", lag: null }
  const server = createServer((request, response) => {
    let body = ""
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk)).on("end", () => {
      const call = JSON.parse(body) as { id: unknown; method: string; params?: Array<unknown> }
      const lag = state.lag
      const reply = (result: unknown) =>
        response.writeHead(200, { "content-type": "application/json" }).end(
          JSON.stringify({ jsonrpc: "2.0", id: call.id, result })
        )
      if (lag !== null) {
        const first = String(call.params?.[0] ?? "").toLowerCase()
        if (call.method === "eth_blockNumber" && lag.blockCalls++ > 0) return reply(toHex(lag.head))
        if (
          (call.method === "eth_getTransactionReceipt" || call.method === "eth_getTransactionByHash") &&
          first === lag.hash.toLowerCase()
        ) return reply(null)
      }
      fetch(state.upstream, { method: "POST", headers: { "content-type": "application/json" }, body })
        .then((_) => _.text())
        .then((text) => response.writeHead(200, { "content-type": "application/json" }).end(text))
        .catch(() => response.socket?.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { state, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() }
})()

/**
 * A payout whose broadcast was mined but whose answer was lost is found by the worker's next run and not paid
 * again, even through a provider whose answering node is a block behind the one that showed the nonce spent
 * (before, the payout was called dead there and a second transfer signed: an attack review).
 */
for (const backend of backends) {
  // PostgreSQL runs need DATABASE_URL; without it they are reported as skipped.
  describe.skipIf(!backend.available)(`x402 payouts behind a lagging RPC node over ${backend.name}`, () => {
    afterAll(() => lagging.close())
    const desk = x402DeskOn(backend.layer, {
      settings: (base) => {
        lagging.state.upstream = base.rpcUrl
        return { ...base, rpcUrl: lagging.url }
      }
    })
    layer(desk, { timeout: 120_000, excludeTestServices: true })((it) => {
      it.effect(
        "a payout mined while a lagging RPC node has not seen it yet is not signed and paid a second time",
        () =>
          Effect.gen(function*() {
            const { balanceOf, chain, proxy } = yield* TestChain
            const payouts = yield* Payouts
            // The desk wallet holds more than one share, so a second payout would not revert for want of funds.
            yield* fundDeskWallet(5_000_000n)
            const reader = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })

            const payee = freshPayee()
            const { id } = yield* fileHandoff(0.2, payee)
            const buyer = newAgentId()
            // The payout's broadcast reaches the chain (mined at once) but its answer is lost: recorded `failed`,
            // with its signed bytes kept for a re-broadcast.
            proxy.rule = (call) => (isPayoutBroadcast(call) ? "lose-answer" : "pass")
            const bought = yield* unlockWith(id, buyer, {
              "x-payment": yield* Effect.promise(() => forger(chain).v1(PRICE))
            })
            expect(bought.status).toBe(200)
            yield* eventually(receiptsOf(buyer), (_) => _[0]?.filerPayoutStatus === "failed")
            proxy.rule = () => "pass"
            const lost = proxy.faulted.find((_) => isPayoutBroadcast(_.call, bought.json.receipt.receiptId))!
            const firstHash = txHashOf(lost.call)
            const mined = yield* Effect.promise(() => reader.getTransactionReceipt({ hash: firstHash as Hex }))
            expect(mined.status).toBe("success")
            expect(yield* Effect.promise(() => balanceOf(payee))).toBe(180_000n)

            // The worker's next run reads through a provider whose answering node is one block behind.
            yield* Effect.sleep("300 millis")
            lagging.state.lag = { hash: firstHash, head: mined.blockNumber - 1n, blockCalls: 0 }
            yield* payouts.runOnce.pipe(Effect.ensuring(Effect.sync(() => (lagging.state.lag = null))))
            yield* payouts.runOnce

            expect(yield* Effect.promise(() => balanceOf(payee)), "the filer's 90 % is paid once").toBe(180_000n)
          })
      )
    })
  })
}
