import type { SqlClient } from "@effect/sql"
import { x402Client, x402HTTPClient } from "@x402/core/client"
import type { Network } from "@x402/core/types"
import { toClientEvmSigner } from "@x402/evm"
import { registerExactEvmScheme } from "@x402/evm/exact/client"
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/client"
import { wrapFetchWithPayment } from "@x402/fetch"
import { Context, Effect, Layer, Logger, Option, Redacted } from "effect"
import { type Address, createPublicClient, createWalletClient, type Hex, http, parseAbi, toHex } from "viem"
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts"
import * as LocalChain from "../../../adapters/chain/LocalChain.ts"
import * as X402 from "../../../adapters/settlement/X402.ts"
import type { X402Settings } from "../../../adapters/settlement/X402Config.ts"
import * as OfferReceipt from "../../../adapters/signing/OfferReceipt.ts"
import type { DeskSettings } from "../../../src/Config.ts"
import { deskOn, readJson, TestDesk } from "../../support/Desk.ts"
import { filing, newAgentId } from "../../support/Fixtures.ts"
import { type RpcProxy, startRpcProxy } from "./RpcProxy.ts"

export const EXPLORER = "https://sepolia.basescan.org"

export interface TestChainShape {
  readonly chain: LocalChain.LocalChain
  readonly proxy: RpcProxy
  readonly settings: X402Settings
  /** Reads the chain directly, past the proxy's faults. */
  readonly balanceOf: (address: Address) => Promise<bigint>
}

export class TestChain extends Context.Tag("TestChain")<TestChain, TestChainShape>() {}

const usdc = parseAbi(["function balanceOf(address account) view returns (uint256)"])

/** A local chain (anvil + EIP-3009 USDC), the fault-injecting RPC proxy in front of it, for one suite. */
export const chainScoped = (options: LocalChain.LocalChainOptions = {}) =>
  Effect.gen(function*() {
    const chain = yield* Effect.acquireRelease(Effect.promise(() => LocalChain.start(options)), (c) =>
      Effect.promise(c.stop))
    const proxy = yield* Effect.acquireRelease(
      Effect.promise(() =>
        startRpcProxy(chain.rpcUrl)
      ),
      (p) => Effect.promise(p.close)
    )
    const reader = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })
    const settings: X402Settings = {
      rpcUrl: proxy.url,
      network: "base-sepolia",
      chainId: chain.chainId,
      asset: { address: chain.tokenAddress, name: "USDC", version: "2" },
      payTo: chain.accounts.desk.address,
      walletKey: Option.some(Redacted.make(chain.accounts.desk.privateKey)),
      facilitatorUrl: Option.none(),
      facilitatorHeaders: Redacted.make({ verify: {}, settle: {}, supported: {} }),
      explorerUrl: Option.some(EXPLORER),
      rpcTimeoutMs: 2_000,
      confirmTimeoutMs: 3_000,
      maxTimeoutSeconds: 300
    }
    const balanceOf = (address: Address) =>
      reader.readContract({ address: chain.tokenAddress, abi: usdc, functionName: "balanceOf", args: [address] })
    return { chain, proxy, settings, balanceOf } satisfies TestChainShape
  })

/**
 * The real desk with the x402 adapter on a fresh local chain. The outbox interval is long so that tests
 * drive the worker themselves (Payouts.runOnce), except that each paid unlock kicks it as in production.
 */
export const x402DeskOn = <E>(
  storage: Layer.Layer<SqlClient.SqlClient, E>,
  options: {
    readonly config?: Partial<DeskSettings>
    readonly settings?: (base: X402Settings) => X402Settings
    readonly chain?: LocalChain.LocalChainOptions
  } = {}
) =>
  Layer.unwrapScoped(
    Effect.map(chainScoped(options.chain), (testChain) => {
      const settings = options.settings?.(testChain.settings) ?? testChain.settings
      return Layer.merge(
        deskOn(storage, X402.layer(settings), {
          config: { paymentRequired: true, outboxIntervalMs: 3_600_000, payoutRetryMs: 100, ...options.config },
          // The desk wallet signs offers and receipts, as src/Adapters.ts chooses when it is configured.
          receiptSigning: OfferReceipt.eip712(
            Redacted.make(testChain.chain.accounts.desk.privateKey),
            testChain.settings.chainId
          )
        }),
        Layer.succeed(TestChain, { ...testChain, settings })
      ).pipe(Layer.provide(Logger.remove(Logger.defaultLogger)))
    })
  )

export interface Sent {
  readonly status: number
  readonly headers: Headers
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export const send = (path: string, init?: Parameters<TestDesk["Type"]["request"]>[1]) =>
  Effect.flatMap(TestDesk, (desk) =>
    Effect.promise(async (): Promise<Sent> => {
      const response = await desk.request(path, init)
      return { status: response.status, headers: response.headers, json: await readJson(response) }
    }))

/** Files a handoff for a new filer (with `payoutAddress` registered when given) and returns its id and filer. */
export const fileHandoff = (priceUsd: number, payoutAddress?: Address) =>
  Effect.gen(function*() {
    const filer = newAgentId()
    const overrides = payoutAddress === undefined ? { priceUsd } : { priceUsd, payoutAddress }
    const filed = yield* send("/api/handoffs", {
      json: filing(filer, { ...overrides, reconstructUsd: priceUsd * 100 + 1 }),
      agent: filer
    })
    if (filed.status !== 201) return yield* Effect.dieMessage(`filing failed: ${JSON.stringify(filed.json)}`)
    return { id: filed.json.id as string, filer }
  })

export const unlockWith = (id: string, buyer: string, headers: Record<string, string> = {}) =>
  send(`/api/handoffs/${id}/unlock`, { json: { payer: buyer }, agent: buyer, headers })

/**
 * An unlock retried as an x402 buyer does while the answer is 202 `settlement_pending`: the same request after
 * Retry-After, until a final answer (at most `tries` times).
 */
export const unlockUntilFinal = (id: string, buyer: string, headers: Record<string, string>, tries = 6) =>
  Effect.gen(function*() {
    let answer = yield* unlockWith(id, buyer, headers)
    for (let i = 0; answer.status === 202 && i < tries; i++) {
      yield* Effect.sleep(`${Number(answer.headers.get("retry-after"))} seconds`)
      answer = yield* unlockWith(id, buyer, headers)
    }
    return answer
  })

export const receiptsOf = (buyer: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  Effect.map(send(`/api/receipts?payer=${buyer}`), (_) => _.json.receipts as Array<any>)

export const decodeHeader = (value: string | null) =>
  value === null ? null : JSON.parse(Buffer.from(value, "base64").toString("utf8"))

/** An off-the-shelf x402 v2 buyer: @x402/fetch with a viem account, spend-capped to the local test token. */
export const v2Buyer = (key: Hex, token: Address, network: Network = "eip155:84532") => {
  const client = registerExactEvmScheme(new x402Client(), { signer: toClientEvmSigner(privateKeyToAccount(key)) })
  // The local token is not a USDC x402 knows, so the buyer allows it by address (its cap applies per payment).
  client.setSpendControls({ allowedAssets: [{ network, asset: token, maxAmountPerPayment: "5000000" }] })
  return { client, pay: wrapFetchWithPayment(fetch, new x402HTTPClient(client)) }
}

/**
 * An x402 v1 buyer: @x402/fetch's own v1 client (ExactEvmSchemeV1, X-PAYMENT). A current @x402/fetch reads
 * the v2 PAYMENT-REQUIRED header whenever it is present, so this transport shows it only what a v1-era
 * client reads, the 402 body, exactly as the legacy v1 clients see the desk.
 */
export const v1Buyer = (key: Hex, token: Address) => {
  // registerV1 takes a v1 network name, though its parameter is typed with v2's CAIP-2 template.
  const client = new x402Client().registerV1(
    "base-sepolia" as Network,
    new ExactEvmSchemeV1(toClientEvmSigner(privateKeyToAccount(key)))
  )
  client.setSpendControls({
    allowedAssets: [{ network: "base-sepolia" as Network, asset: token, maxAmountPerPayment: "5000000" }]
  })
  const bodyOnly = async (input: Request | string | URL, init?: RequestInit) => {
    const response = await fetch(input, init)
    const headers = new Headers(response.headers)
    headers.delete("payment-required")
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }
  return { client, pay: wrapFetchWithPayment(bodyOnly as typeof fetch, new x402HTTPClient(client)) }
}

export const nowSeconds = () => Math.floor(Date.now() / 1000)
/** A payout address of one test's own, so its balance moves only with that test's payouts. */
export const freshPayee = () => privateKeyToAccount(generatePrivateKey()).address
export const freshNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)))

/**
 * Sends `amount` micro-USDC from the `other` account to the desk wallet, mined: a payout is estimated (and would
 * revert) against what the wallet holds.
 */
export const fundDeskWallet = (amount: bigint) =>
  Effect.flatMap(TestChain, ({ chain }) =>
    Effect.promise(async () => {
      const funder = createWalletClient({
        account: privateKeyToAccount(chain.accounts.other.privateKey),
        chain: chain.chain,
        transport: http(chain.rpcUrl)
      })
      const hash = await funder.writeContract({
        address: chain.tokenAddress,
        abi: parseAbi(["function transfer(address to, uint256 value) returns (bool)"]),
        functionName: "transfer",
        args: [chain.accounts.desk.address, amount]
      })
      await createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) }).waitForTransactionReceipt({
        hash
      })
    }))

/** Polls until `done` holds (the background worker runs on its own fiber), at most `tries` × 100 ms. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, done: (a: A) => boolean, tries = 100) =>
  Effect.gen(function*() {
    for (let i = 0; i < tries; i++) {
      const value = yield* effect
      if (done(value)) return value
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage(`condition not reached after ${tries} polls`)
  })
