import {
  type Abi,
  type Address,
  type Chain,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  type Hex,
  http,
  parseUnits
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { spawnAnvil } from "./Anvil.ts"
import { anvilAccount, anvilMnemonic, type ChainAccount } from "./AnvilAccounts.ts"
import { multicall3Address, multicall3CreationCode } from "./Multicall3.ts"
import artifact from "./TestUsdc.json" with { type: "json" }

export type { ChainAccount } from "./AnvilAccounts.ts"

export interface LocalChainOptions {
  /** 0 (the default) lets the OS pick a free port. */
  readonly port?: number
  /** Defaults to 84532 (base-sepolia), the network x402 names `eip155:84532`. */
  readonly chainId?: number
  readonly tokenName?: string
  readonly tokenVersion?: string
}

export interface LocalChainAccounts {
  readonly desk: ChainAccount
  readonly buyer: ChainAccount
  readonly filer: ChainAccount
  readonly other: ChainAccount
}

export interface LocalChain {
  readonly rpcUrl: string
  readonly chainId: number
  readonly chain: Chain
  readonly tokenAddress: Address
  readonly deployer: ChainAccount
  readonly accounts: LocalChainAccounts
  /** Must always be called; safe to call more than once. */
  readonly stop: () => Promise<void>
}

export const testUsdc = artifact as { readonly contractName: string; readonly abi: Abi; readonly bytecode: Hex }

export const buyerStartingBalance = parseUnits("1000", 6)
export const otherStartingBalance = parseUnits("100", 6)

export const start = async (options: LocalChainOptions = {}): Promise<LocalChain> => {
  const chainId = options.chainId ?? 84532
  const anvil = await spawnAnvil({ port: options.port ?? 0, chainId, mnemonic: anvilMnemonic })
  try {
    const chain = defineChain({
      id: chainId,
      name: "Handoff Desk local chain",
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [anvil.rpcUrl] } }
    })
    const deployer = anvilAccount(0)
    const accounts = { desk: anvilAccount(1), buyer: anvilAccount(2), filer: anvilAccount(3), other: anvilAccount(4) }
    const tokenAddress = await deployToken(chain, deployer, options.tokenName ?? "USDC", options.tokenVersion ?? "2", [
      [accounts.buyer.address, buyerStartingBalance],
      [accounts.other.address, otherStartingBalance]
    ])
    await installMulticall3(chain)
    return { rpcUrl: anvil.rpcUrl, chainId, chain, tokenAddress, deployer, accounts, stop: anvil.stop }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}

const deployToken = async (
  chain: Chain,
  deployer: ChainAccount,
  name: string,
  version: string,
  mints: ReadonlyArray<readonly [Address, bigint]>
): Promise<Address> => {
  // Anvil mines on every transaction, so a short polling interval is all the waiting there is.
  const publicClient = createPublicClient({ chain, transport: http(), pollingInterval: 20 })
  const wallet = createWalletClient({ chain, transport: http(), account: privateKeyToAccount(deployer.privateKey) })
  const deployment = await publicClient.waitForTransactionReceipt({
    hash: await wallet.deployContract({ abi: testUsdc.abi, bytecode: testUsdc.bytecode, args: [name, version] })
  })
  const tokenAddress = deployment.contractAddress
  if (deployment.status !== "success" || !tokenAddress) throw new Error("TestUsdc deployment failed")
  for (const [to, amount] of mints) {
    const receipt = await publicClient.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: tokenAddress,
        abi: testUsdc.abi,
        functionName: "mint",
        args: [to, amount]
      })
    })
    if (receipt.status !== "success") throw new Error(`TestUsdc mint to ${to} failed`)
  }
  return getAddress(tokenAddress)
}

const installMulticall3 = async (chain: Chain) => {
  const publicClient = createPublicClient({ chain, transport: http() })
  // A call without `to` runs the creation code and returns the runtime code it would deploy.
  const { data } = await publicClient.call({ data: multicall3CreationCode })
  if (data === undefined) throw new Error("Multicall3 creation code returned no runtime code")
  await createTestClient({ chain, mode: "anvil", transport: http() }).setCode({
    address: multicall3Address,
    bytecode: data
  })
}
