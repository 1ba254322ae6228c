import { authorizationTypes } from "@x402/evm"
import type { Address, Hex } from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { LocalChain } from "../../../adapters/chain/LocalChain.ts"
import { freshNonce, nowSeconds } from "./Chain.ts"

export interface Authorization {
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  readonly validAfter: bigint
  readonly validBefore: bigint
  readonly nonce: Hex
}

export interface Forgery {
  /** Changes to the signed message. */
  readonly authorization?: Partial<Authorization>
  /** Changes to the EIP-712 domain the signature is made over. */
  readonly domain?: Partial<{ name: string; version: string; chainId: number; verifyingContract: Address }>
  /** Signs with this key instead of the buyer's. */
  readonly signer?: Hex
  /** Changes to the payload after signing (a tampered message). */
  readonly tamper?: Partial<Record<keyof Authorization, string>>
  /** v1: the payload's network. */
  readonly network?: string
  /** v2: changes to the echoed `accepted` requirement. */
  readonly accepted?: Record<string, unknown>
  /** v2: the payload's `extensions` (a payment id, say). */
  readonly extensions?: Record<string, unknown>
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64")

/** Hand-made x402 payments, honest or not, signed exactly as the x402 exact EVM client signs. */
export const forger = (chain: LocalChain) => {
  const { buyer, desk } = chain.accounts

  const signed = async (priceMicro: bigint, forgery: Forgery) => {
    const authorization: Authorization = {
      from: buyer.address,
      to: desk.address,
      value: priceMicro,
      validAfter: BigInt(nowSeconds() - 600),
      validBefore: BigInt(nowSeconds() + 300),
      nonce: freshNonce(),
      ...forgery.authorization
    }
    const signature = await privateKeyToAccount(forgery.signer ?? buyer.privateKey).signTypedData({
      domain: {
        name: "USDC",
        version: "2",
        chainId: chain.chainId,
        verifyingContract: chain.tokenAddress,
        ...forgery.domain
      },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: authorization
    })
    const wire = {
      from: authorization.from,
      to: authorization.to,
      value: authorization.value.toString(),
      validAfter: authorization.validAfter.toString(),
      validBefore: authorization.validBefore.toString(),
      nonce: authorization.nonce,
      ...forgery.tamper
    }
    return { signature, authorization: wire }
  }

  const v1 = async (priceMicro: bigint, forgery: Forgery = {}) =>
    encode({
      x402Version: 1,
      scheme: "exact",
      network: forgery.network ?? "base-sepolia",
      payload: await signed(priceMicro, forgery)
    })

  const v2 = async (priceMicro: bigint, forgery: Forgery = {}) =>
    encode({
      x402Version: 2,
      accepted: {
        scheme: "exact",
        network: `eip155:${chain.chainId}`,
        amount: priceMicro.toString(),
        asset: chain.tokenAddress,
        payTo: desk.address,
        maxTimeoutSeconds: 300,
        extra: { name: "USDC", version: "2" },
        ...forgery.accepted
      },
      payload: await signed(priceMicro, forgery),
      ...(forgery.extensions === undefined ? {} : { extensions: forgery.extensions })
    })

  return { v1, v2 }
}
