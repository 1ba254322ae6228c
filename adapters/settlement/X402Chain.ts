import { Option, Redacted } from "effect"
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  getAbiItem,
  getAddress,
  type Hex,
  http,
  isAddressEqual,
  createNonceManager,
  parseAbi,
  parseEventLogs,
  publicActions
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { jsonRpc } from "viem/nonce"
import type { AuthorizationLookup, VerifiedPayment } from "../../src/Settlement.ts"
import type { X402Settings } from "./X402Config.ts"

export const tokenAbi = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transfer(address to, uint256 value) returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)"
])

/** viem clients for the configured chain; every call is bounded by the transport timeout. */
export const makeChain = (settings: X402Settings) => {
  const chain = defineChain({
    id: settings.chainId,
    name: settings.network,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [settings.rpcUrl] } }
  })
  const transport = http(settings.rpcUrl, { timeout: settings.rpcTimeoutMs, retryCount: 1 })
  // Waiting for a receipt polls; a short interval keeps a settlement's latency near the chain's block time.
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 250 })
  const wallet = Option.map(settings.walletKey, (key) =>
    createWalletClient({
      chain,
      transport,
      pollingInterval: 250,
      // One nonce counter for settlements and payouts, which share the desk wallet; viem's default manager is
      // process-wide, which would leak nonces between two desks (or chains) with one key and chain id.
      account: privateKeyToAccount(Redacted.value(key), { nonceManager: createNonceManager({ source: jsonRpc() }) })
    }).extend(publicActions))

  /**
   * EIP-3009 marks an authorization used on transfer *and* on cancel, and a buyer could sign two transfers
   * with one nonce: only an AuthorizationUsed whose transaction moved exactly the price to payTo counts.
   */
  const lookup = async (payment: VerifiedPayment, fromBlock: bigint): Promise<AuthorizationLookup> => {
    const authorizer = getAddress(payment.payerAddress)
    const nonce = payment.nonce as Hex
    const used = await publicClient.readContract({
      address: settings.asset.address,
      abi: tokenAbi,
      functionName: "authorizationState",
      args: [authorizer, nonce]
    })
    if (!used) return { _tag: "Unused" }
    const logs = await publicClient.getLogs({
      address: settings.asset.address,
      event: getAbiItem({ abi: tokenAbi, name: "AuthorizationUsed" }),
      args: { authorizer, nonce },
      fromBlock
    })
    const txHash = logs[0]?.transactionHash
    if (txHash === undefined || txHash === null) {
      return { _tag: "Spent", reason: "authorization_canceled_or_used_elsewhere" }
    }
    const receipt = await publicClient.getTransactionReceipt({ hash: txHash })
    const paid = parseEventLogs({ abi: tokenAbi, eventName: "Transfer", logs: receipt.logs }).some((log) =>
      isAddressEqual(log.address, settings.asset.address) && isAddressEqual(log.args.from, authorizer) &&
      isAddressEqual(log.args.to, settings.payTo) && log.args.value === BigInt(payment.amountMicro)
    )
    return paid ? { _tag: "Used", txHash } : { _tag: "Spent", reason: "authorization_used_elsewhere" }
  }

  return { chain, publicClient, wallet, lookup }
}

export type Chain = ReturnType<typeof makeChain>
