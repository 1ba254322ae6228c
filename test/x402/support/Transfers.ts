import { type Address, createPublicClient, type Hex, http, parseAbi, toHex } from "viem"
import type { LocalChain } from "../../../adapters/chain/LocalChain.ts"

const transfer = parseAbi(["event Transfer(address indexed from, address indexed to, uint256 value)"])[0]

/** Every mined USDC transfer out of `from` whose transaction carries `reference` after its call data (a payout). */
export const transfersCarrying = async (chain: LocalChain, from: Address, reference: string) => {
  const client = createPublicClient({ chain: chain.chain, transport: http(chain.rpcUrl) })
  const logs = await client.getLogs({ address: chain.tokenAddress, event: transfer, args: { from }, fromBlock: 0n })
  const suffix = toHex(reference).slice(2)
  const found: Array<{ txHash: Hex; to: Address; value: bigint }> = []
  for (const log of logs) {
    const tx = await client.getTransaction({ hash: log.transactionHash })
    if (tx.input.endsWith(suffix)) found.push({ txHash: log.transactionHash, to: log.args.to!, value: log.args.value! })
  }
  return found
}
