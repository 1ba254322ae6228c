import { Option, Redacted } from "effect"
import {
  type AbiEvent,
  type Address,
  createNonceManager,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAbiItem,
  getAddress,
  type Hex,
  http,
  isAddressEqual,
  type Log,
  parseAbi,
  parseEventLogs,
  publicActions
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { jsonRpc } from "viem/nonce"
import type { AuthorizationLookup, VerifiedPayment } from "../../src/Settlement.ts"
import type { X402Settings } from "./X402Config.ts"
import { caipNetwork } from "./X402Requirements.ts"

/** Providers cap the block range of eth_getLogs (2,000 to 10,000 blocks is common): logs are asked for in chunks. */
const LOG_CHUNK_BLOCKS = 2_000n
/** How far before a claim an authorization it names may have been used (about 5.5 hours of Base blocks). */
const LOOKBACK_BLOCKS = 10_000n
/** Block timestamps trail the wall clock a little: an authorization is treated as dead only well after validBefore. */
const EXPIRY_GRACE_SECONDS = 60

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
  const caip = caipNetwork(settings)
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

  /** Every log matching `filter` in [fromBlock, toBlock], asked for in bounded ranges (providers cap them). */
  const scanLogs = async <const E extends AbiEvent>(
    event: E,
    args: Record<string, unknown>,
    fromBlock: bigint,
    toBlock: bigint,
    stopAtFirst = false,
    token: Address = settings.asset.address
  ) => {
    const found: Array<Log<bigint, number, false, E, true>> = []
    for (let start = fromBlock; start <= toBlock; start += LOG_CHUNK_BLOCKS) {
      const end = start + LOG_CHUNK_BLOCKS - 1n < toBlock ? start + LOG_CHUNK_BLOCKS - 1n : toBlock
      // viem types `args` per event; this helper serves several events, so the filter is checked by the callers.
      const logs = await publicClient.getLogs(
        {
          address: token,
          event,
          args,
          fromBlock: start,
          toBlock: end,
          strict: true
        } as unknown as Parameters<
          typeof publicClient.getLogs
        >[0]
      )
      found.push(...(logs as unknown as Array<Log<bigint, number, false, E, true>>))
      if (stopAtFirst && found.length > 0) break
    }
    return found
  }

  /**
   * The transfer an AuthorizationUsed log's own call emitted: the token's next log in the same transaction
   * (FiatToken and our TestUsdc emit AuthorizationUsed, then Transfer(from, to, value)).
   */
  const transferAfter = async (
    used: { transactionHash: Hex; logIndex: number },
    token: Address = settings.asset.address
  ) => {
    const receipt = await publicClient.getTransactionReceipt({ hash: used.transactionHash })
    const next = receipt.logs.find((log) => log.logIndex === used.logIndex + 1)
    if (receipt.status !== "success" || next === undefined || !isAddressEqual(next.address, token)) {
      return undefined
    }
    const [decoded] = parseEventLogs({ abi: tokenAbi, eventName: "Transfer", logs: [next], strict: true })
    return decoded === undefined
      ? undefined
      : {
        from: decoded.args.from,
        to: decoded.args.to,
        value: decoded.args.value,
        logIndex: next.logIndex,
        blockNumber: receipt.blockNumber
      }
  }

  /**
   * Read at one block, so a lagging or load-balanced RPC cannot mix two chain states. EIP-3009 marks an
   * authorization used on transfer *and* on cancel, and one transaction may move other money too: only the
   * Transfer that this authorization's own call emitted, of exactly the price from the authorizer to payTo,
   * counts as paying the desk. What is not seen yet is Unknown, never a refusal.
   */
  const lookup = async (payment: VerifiedPayment, fromBlock: bigint): Promise<AuthorizationLookup> => {
    const { requirements } = payment.payment
    if (requirements.network !== (payment.payment.x402Version === 1 ? settings.network : caip)) {
      return { _tag: "Unknown", detail: `a payment on ${requirements.network}, not this desk's chain` }
    }
    // The asset and payTo the claim was made for: the desk's own may have changed since (DESK_PAY_TO), or differ on
    // another desk of the database, and the buyer paid what it signed.
    const token = getAddress(requirements.asset)
    const payTo = getAddress(requirements.payTo)
    const authorizer = getAddress(payment.payerAddress)
    const nonce = payment.nonce as Hex
    const head = await publicClient.getBlock({ blockTag: "latest" })
    const used = await publicClient.readContract({
      address: token,
      abi: tokenAbi,
      functionName: "authorizationState",
      args: [authorizer, nonce],
      blockNumber: head.number
    })
    if (!used) {
      // EIP-3009 requires block.timestamp < validBefore: once a block at or past it exists, no later block can use it.
      const expired = head.timestamp >= BigInt(payment.validBefore) &&
        Date.now() / 1000 > payment.validBefore + EXPIRY_GRACE_SECONDS
      return { _tag: "Unused", expired }
    }
    const args = { authorizer, nonce }
    const usedEvent = getAbiItem({ abi: tokenAbi, name: "AuthorizationUsed" })
    // The buyer (or anyone holding the authorization) may have used it before the desk's claim recorded fromBlock.
    const earlier = fromBlock > LOOKBACK_BLOCKS ? fromBlock - LOOKBACK_BLOCKS : 0n
    let [event] = await scanLogs(usedEvent, args, fromBlock, head.number, true, token)
    if (event === undefined && fromBlock > 0n) {
      const [before] = await scanLogs(usedEvent, args, earlier, fromBlock - 1n, true, token)
      event = before
    }
    if (event === undefined) {
      const canceled = await scanLogs(
        getAbiItem({ abi: tokenAbi, name: "AuthorizationCanceled" }),
        args,
        earlier,
        head.number,
        true,
        token
      )
      return canceled.length > 0
        ? { _tag: "Spent", reason: "authorization_canceled" }
        : { _tag: "Unknown", detail: `authorization used by block ${head.number}, its event not found yet` }
    }
    const transfer = await transferAfter(event, token)
    const paid = transfer !== undefined && isAddressEqual(transfer.from, authorizer) &&
      isAddressEqual(transfer.to, payTo) && transfer.value === BigInt(payment.amountMicro)
    return paid
      ? {
        _tag: "Used",
        transfer: { chainId: settings.chainId, txHash: event.transactionHash, logIndex: transfer.logIndex }
      }
      : { _tag: "Spent", reason: "authorization_used_elsewhere" }
  }

  return { chain, publicClient, wallet, lookup, scanLogs, transferAfter }
}

export type Chain = ReturnType<typeof makeChain>
