import { Effect, Option } from "effect"
import { concat, encodeFunctionData, getAddress, type Hex, keccak256, toHex } from "viem"
import type { PayoutRail, PayoutState, SignedPayout } from "../../src/Settlement.ts"
import { type Chain, tokenAbi } from "./X402Chain.ts"
import type { X402Settings } from "./X402Config.ts"

const describe = (error: unknown) => (error instanceof Error ? error.message.split("\n")[0]! : String(error))

const attempt = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: describe })

/** USDC `transfer`s from the desk wallet, signed here and broadcast separately so the bytes can be stored first. */
export const makePayouts = (settings: X402Settings, chain: Chain): Option.Option<PayoutRail> =>
  Option.map(chain.wallet, (wallet): PayoutRail => {
    const { account } = wallet
    const nonces = { address: account.address, chainId: settings.chainId, client: wallet }

    const sign = (to: string, amountMicro: number, reference: string) =>
      attempt(async (): Promise<SignedPayout> => {
        // The reference after the call data (ignored by the token) makes every payout's bytes, hence its hash,
        // its own: two payouts of one amount to one filer that drew the same nonce stay two transactions.
        const data = concat([
          encodeFunctionData({ abi: tokenAbi, functionName: "transfer", args: [getAddress(to), BigInt(amountMicro)] }),
          toHex(reference)
        ])
        // The nonce is taken last, after every call that can fail, so a failed preparation leaves no gap.
        const prepared = await wallet.prepareTransactionRequest({
          account: account.address,
          to: settings.asset.address,
          data,
          parameters: ["fees", "gas", "chainId", "type"]
        })
        const nonce = await account.nonceManager!.consume(nonces)
        const signedTx = await account.signTransaction({ ...prepared, nonce } as Parameters<typeof account.signTransaction>[0])
        return { signedTx, txHash: keccak256(signedTx), txNonce: nonce }
      })

    const broadcast = (signedTx: string) =>
      attempt(() => wallet.sendRawTransaction({ serializedTransaction: signedTx as Hex })).pipe(
        // The next transaction must not wait behind a nonce that never reached the chain.
        Effect.tapError(() => Effect.sync(() => account.nonceManager!.reset(nonces))),
        Effect.asVoid
      )

    /** Read the confirmed nonce before the receipt: a later nonce with no receipt means ours can never land. */
    const state = (payout: SignedPayout) =>
      attempt(async (): Promise<PayoutState> => {
        const confirmed = await wallet.getTransactionCount({ address: account.address, blockTag: "latest" })
        const receipt = await wallet.getTransactionReceipt({ hash: payout.txHash as Hex }).catch((error: unknown) => {
          if (error instanceof Error && error.name === "TransactionReceiptNotFoundError") return null
          throw error
        })
        if (receipt !== null) return receipt.status === "success" ? { _tag: "Confirmed" } : { _tag: "Reverted" }
        return confirmed > payout.txNonce ? { _tag: "Dead" } : { _tag: "InFlight" }
      })

    const confirm = (payout: SignedPayout) =>
      attempt(() => wallet.waitForTransactionReceipt({ hash: payout.txHash as Hex, timeout: settings.confirmTimeoutMs })).pipe(
        Effect.map((receipt): PayoutState => (receipt.status === "success" ? { _tag: "Confirmed" } : { _tag: "Reverted" })),
        Effect.orElse(() => state(payout))
      )

    return { sign, broadcast, state, confirm }
  })
