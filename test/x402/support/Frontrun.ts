import { authorizationTypes } from "@x402/evm"
import {
  type Address,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  type Hex,
  http,
  parseAbi,
  parseGwei
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import type { ChainAccount, LocalChain } from "../../../adapters/chain/LocalChain.ts"
import { multicall3Address } from "../../../adapters/chain/Multicall3.ts"
import { nowSeconds } from "./Chain.ts"

const multicall3 = parseAbi([
  "struct Call3 { address target; bool allowFailure; bytes callData; }",
  "struct Result { bool success; bytes returnData; }",
  "function aggregate3(Call3[] calls) payable returns (Result[] returnData)"
])

const transferWithAuthorization = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)"
])

export interface Signed {
  readonly to: Address
  readonly value: bigint
  readonly nonce: Hex
}

/**
 * What an attacker holding the buyer's key does on the local chain: sign EIP-3009 authorizations of its
 * own (any nonce, any payee) and land them in one Multicall3 transaction ahead of the desk's settlements.
 */
export const attacker = (chain: LocalChain, payer: ChainAccount) => {
  const testClient = createTestClient({ chain: chain.chain, mode: "anvil", transport: http(chain.rpcUrl) })
  const publicClient = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })

  const callOf = async ({ nonce, to, value }: Signed) => {
    const authorization = {
      from: payer.address,
      to,
      value,
      validAfter: BigInt(nowSeconds() - 600),
      validBefore: BigInt(nowSeconds() + 300),
      nonce
    }
    const signature = await privateKeyToAccount(payer.privateKey).signTypedData({
      domain: { name: "USDC", version: "2", chainId: chain.chainId, verifyingContract: chain.tokenAddress },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: authorization
    })
    return {
      target: chain.tokenAddress,
      allowFailure: false,
      callData: encodeFunctionData({
        abi: transferWithAuthorization,
        functionName: "transferWithAuthorization",
        args: [
          authorization.from,
          authorization.to,
          authorization.value,
          authorization.validAfter,
          authorization.validBefore,
          authorization.nonce,
          signature
        ]
      })
    }
  }

  /** One Multicall3 transaction spending every authorization, with a tip that puts it first in the next block. */
  const frontRun = async (sender: ChainAccount, authorizations: ReadonlyArray<Signed>) => {
    const wallet = createWalletClient({
      chain: chain.chain,
      transport: http(chain.rpcUrl),
      account: privateKeyToAccount(sender.privateKey)
    })
    const calls = await Promise.all(authorizations.map(callOf))
    return wallet.writeContract({
      address: multicall3Address,
      abi: multicall3,
      functionName: "aggregate3",
      args: [calls],
      gas: 1_000_000n,
      maxPriorityFeePerGas: parseGwei("100"),
      maxFeePerGas: parseGwei("200")
    })
  }

  return {
    frontRun,
    pendingCount: () => publicClient.getBlock({ blockTag: "pending" }).then((block) => block.transactions.length),
    receipt: (hash: Hex) => publicClient.getTransactionReceipt({ hash }),
    automine: (on: boolean) => testClient.setAutomine(on),
    mine: () => testClient.mine({ blocks: 1 })
  }
}
