import { Duration, Effect, Option } from "effect"
import { concat, encodeFunctionData, getAbiItem, getAddress, type Hex, keccak256, toHex } from "viem"
import { PayoutFailure, type PayoutRail, type PayoutState, type SignedPayout } from "../../src/Payouts/Rail.ts"
import { type Chain, tokenAbi } from "./X402Chain.ts"
import type { X402Settings } from "./X402Config.ts"

const describe = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0]! : String(error))

/** A call of the chain; `signal` is aborted once the effect is interrupted (its step timed out, its worker stopped). */
const attempt = <A>(run: (signal: AbortSignal) => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (error) => new PayoutFailure({ message: describe(error) }) })

/** viem's HTTP transport tries a call twice (retryCount 1), with a short backoff between the tries. */
const CALL_TRIES = 2
const RETRY_BACKOFF_MS = 500
/** The most calls one step makes: signing fills the transaction, reads the nonce and may estimate fees and gas. */
const CALLS_PER_STEP = 6

/** The payout's call data: a USDC `transfer`, and after it the reference (ignored by the token). */
export const payoutData = (to: string, amountMicro: number, reference: string) =>
  concat([
    encodeFunctionData({ abi: tokenAbi, functionName: "transfer", args: [getAddress(to), BigInt(amountMicro)] }),
    toHex(reference)
  ])

/** USDC `transfer`s from the desk wallet, signed here and broadcast separately so the bytes can be stored first. */
export const makePayouts = (settings: X402Settings, chain: Chain): Option.Option<PayoutRail> =>
  Option.map(chain.wallet, (wallet): PayoutRail => {
    const { account } = wallet
    const nonces = { address: account.address, chainId: settings.chainId, client: wallet }
    const callMs = CALL_TRIES * settings.rpcTimeoutMs + RETRY_BACKOFF_MS

    const forgetNonces = () => account.nonceManager!.reset(nonces)
    const resetNonces = Effect.sync(forgetNonces)

    /**
     * The nonce is taken last, after every call that can fail, so a failed preparation leaves no gap; and only
     * while the step still waits for it. A step given up on (timed out, a worker paused past it) leaves its
     * promise running: a nonce it took afterwards would sign a transaction no one sends, and the counter, which
     * never goes below the last nonce it handed out, would sign every later transaction of the wallet (payouts and
     * settlements) one too high, queued behind the gap for good. So a preparation that lands after its step was
     * given up takes none, and a nonce taken for a transaction that is then not signed, or signed for a step no
     * longer waiting, is handed back (the counter starts again from the chain's).
     */
    const sign = (to: string, amountMicro: number, reference: string) =>
      attempt(async (signal): Promise<SignedPayout> => {
        // The reference makes every payout's bytes, hence its hash, its own: two payouts of one amount to one
        // filer that drew the same nonce stay two transactions, and a mined payout can be found by it.
        const data = payoutData(to, amountMicro, reference)
        const prepared = await wallet.prepareTransactionRequest({
          account: account.address,
          to: settings.asset.address,
          data,
          parameters: ["fees", "gas", "chainId", "type"]
        })
        signal.throwIfAborted()
        const nonce = await account.nonceManager!.consume(nonces)
        try {
          signal.throwIfAborted()
          const signedTx = await account.signTransaction(
            { ...prepared, nonce } as Parameters<typeof account.signTransaction>[0]
          )
          signal.throwIfAborted()
          return { signedTx, txHash: keccak256(signedTx), txNonce: nonce }
        } catch (error) {
          forgetNonces()
          throw error
        }
      })

    const broadcast = (signedTx: string) =>
      attempt(() => wallet.sendRawTransaction({ serializedTransaction: signedTx as Hex })).pipe(
        // The next transaction must not wait behind a nonce that never reached the chain.
        Effect.tapError(() => resetNonces),
        Effect.asVoid
      )

    /**
     * Read at one block: the wallet's confirmed nonce there, then the receipt. A later nonce with no receipt, and
     * no node that still knows the transaction as mined, means ours can never land.
     */
    const state = (payout: SignedPayout) =>
      attempt(async (): Promise<PayoutState> => {
        const head = await wallet.getBlockNumber({ cacheTime: 0 })
        const confirmed = await wallet.getTransactionCount({ address: account.address, blockNumber: head })
        const receipt = await wallet.getTransactionReceipt({ hash: payout.txHash as Hex }).catch((error: unknown) => {
          if (error instanceof Error && error.name === "TransactionReceiptNotFoundError") return null
          throw error
        })
        if (receipt !== null) {
          return receipt.status === "success"
            ? { _tag: "Confirmed" }
            : { _tag: "Reverted", seenAt: receipt.blockNumber }
        }
        if (confirmed <= payout.txNonce) return { _tag: "InFlight" }
        const known = await wallet.getTransaction({ hash: payout.txHash as Hex }).catch(() => null)
        return known?.blockNumber != null ? { _tag: "InFlight" } : { _tag: "Dead", seenAt: head }
      })

    const confirm = (payout: SignedPayout) =>
      attempt(() =>
        wallet.waitForTransactionReceipt({ hash: payout.txHash as Hex, timeout: settings.confirmTimeoutMs })
      ).pipe(
        Effect.map((receipt): PayoutState =>
          receipt.status === "success" ? { _tag: "Confirmed" } : { _tag: "Reverted", seenAt: receipt.blockNumber }
        ),
        Effect.orElse(() => state(payout))
      )

    /**
     * A transfer from the desk wallet to `to` since `fromBlock` whose transaction carries the reference. Behind a
     * load balancer the node asked may lag the one that showed the payout dead: a scan that stops short of
     * `throughBlock` could miss the payout's mined transaction and have it paid twice, so it is refused.
     */
    const findMined = (to: string, amountMicro: number, reference: string, fromBlock: bigint, throughBlock: bigint) =>
      attempt(async () => {
        const head = await wallet.getBlockNumber({ cacheTime: 0 })
        if (head < throughBlock) {
          throw new Error(`the RPC's head ${head} is behind block ${throughBlock}, where the payout was seen dead`)
        }
        const transfers = await chain.scanLogs(
          getAbiItem({ abi: tokenAbi, name: "Transfer" }),
          { from: account.address, to: getAddress(to) },
          fromBlock,
          head
        )
        const suffix = toHex(reference).slice(2)
        for (const log of transfers) {
          if (log.args.value !== BigInt(amountMicro)) continue
          const tx = await wallet.getTransaction({ hash: log.transactionHash })
          if (tx.input.toLowerCase().endsWith(suffix)) return Option.some<string>(log.transactionHash)
        }
        return Option.none<string>()
      })

    return {
      stepTimeout: Duration.millis(settings.confirmTimeoutMs + CALLS_PER_STEP * callMs),
      sign,
      resetNonces,
      broadcast,
      state,
      confirm,
      findMined
    }
  })
