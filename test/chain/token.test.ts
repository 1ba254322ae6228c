import { toClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm"
import { ExactEvmScheme as ExactEvmClient } from "@x402/evm/exact/client"
import { ExactEvmScheme as ExactEvmFacilitator } from "@x402/evm/exact/facilitator"
import {
  type Address,
  createPublicClient,
  createWalletClient,
  domainSeparator,
  type Hex,
  http,
  parseAbi,
  parseEventLogs,
  parseSignature,
  parseUnits,
  publicActions,
  toHex
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as LocalChain from "../../adapters/chain/LocalChain.ts"

const usdc = parseAbi([
  "function balanceOf(address account) view returns (uint256)",
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function decimals() view returns (uint8)",
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)",
  "function mint(address to, uint256 amount) returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)"
])

const authorizationTypes = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" }
  ]
} as const

const price = parseUnits("0.05", 6)
const nowSeconds = () => BigInt(Math.floor(Date.now() / 1000))
const freshNonce = (): Hex => toHex(crypto.getRandomValues(new Uint8Array(32)))

let chain: LocalChain.LocalChain
let client: ReturnType<typeof createPublicClient>
let desk: ReturnType<typeof deskWallet>

const deskWallet = (c: LocalChain.LocalChain) =>
  createWalletClient({ chain: c.chain, transport: http(), account: privateKeyToAccount(c.accounts.desk.privateKey) })
    .extend(publicActions)

const balanceOf = (address: Address) =>
  client.readContract({ address: chain.tokenAddress, abi: usdc, functionName: "balanceOf", args: [address] })

const signAuthorization = (
  signerKey: Hex,
  message: { from: Address; to: Address; value: bigint; validAfter: bigint; validBefore: bigint; nonce: Hex },
  primaryType: "TransferWithAuthorization" | "ReceiveWithAuthorization" = "TransferWithAuthorization"
) =>
  privateKeyToAccount(signerKey).signTypedData({
    domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: chain.tokenAddress },
    types: { [primaryType]: authorizationTypes.TransferWithAuthorization },
    primaryType,
    message
  })

const authorizationFor = (overrides: Partial<{ validAfter: bigint; validBefore: bigint }> = {}) => ({
  from: chain.accounts.buyer.address,
  to: chain.accounts.desk.address,
  value: price,
  validAfter: 0n,
  validBefore: nowSeconds() + 300n,
  nonce: freshNonce(),
  ...overrides
})

const submitVrs = async (authorization: ReturnType<typeof authorizationFor>, signature: Hex) => {
  const { v, r, s } = parseSignature(signature)
  if (v === undefined) throw new Error("expected a legacy 65-byte signature")
  const { from, to, value, validAfter, validBefore, nonce } = authorization
  const hash = await desk.writeContract({
    address: chain.tokenAddress,
    abi: usdc,
    functionName: "transferWithAuthorization",
    args: [from, to, value, validAfter, validBefore, nonce, Number(v), r, s]
  })
  return desk.waitForTransactionReceipt({ hash })
}

beforeAll(async () => {
  chain = await LocalChain.start()
  client = createPublicClient({ chain: chain.chain, transport: http() })
  desk = deskWallet(chain)
})

afterAll(async () => {
  await chain?.stop()
})

describe("TestUsdc on the local chain", () => {
  it("exposes the USDC EIP-712 domain the x402 exact scheme signs against", async () => {
    const read = <F extends "name" | "version" | "decimals" | "DOMAIN_SEPARATOR" | "eip712Domain">(functionName: F) =>
      client.readContract({ address: chain.tokenAddress, abi: usdc, functionName })
    const domain = { name: "USDC", version: "2", chainId: 84532, verifyingContract: chain.tokenAddress } as const

    expect([await read("name"), await read("version"), await read("decimals")]).toEqual(["USDC", "2", 6])
    expect(await read("DOMAIN_SEPARATOR")).toBe(domainSeparator({ domain }))
    expect(await read("eip712Domain")).toEqual([
      "0x0f",
      "USDC",
      "2",
      84532n,
      chain.tokenAddress,
      `0x${"0".repeat(64)}`,
      []
    ])
    expect(await balanceOf(chain.accounts.buyer.address)).toBe(LocalChain.buyerStartingBalance)
    expect(await balanceOf(chain.accounts.other.address)).toBe(LocalChain.otherStartingBalance)
  })

  it("settles a buyer's transferWithAuthorization submitted by the desk exactly once", async () => {
    const { buyer, desk: deskAccount } = chain.accounts
    const [buyerBefore, deskBefore] = [await balanceOf(buyer.address), await balanceOf(deskAccount.address)]
    const authorization = authorizationFor()
    const signature = await signAuthorization(buyer.privateKey, authorization)

    const receipt = await submitVrs(authorization, signature)

    expect(receipt.status).toBe("success")
    expect(await balanceOf(buyer.address)).toBe(buyerBefore - price)
    expect(await balanceOf(deskAccount.address)).toBe(deskBefore + price)
    expect(
      await client.readContract({
        address: chain.tokenAddress,
        abi: usdc,
        functionName: "authorizationState",
        args: [buyer.address, authorization.nonce]
      })
    ).toBe(true)
    expect(parseEventLogs({ abi: usdc, eventName: "AuthorizationUsed", logs: receipt.logs })[0]?.args).toEqual({
      authorizer: buyer.address,
      nonce: authorization.nonce
    })
    await expect(submitVrs(authorization, signature)).rejects.toThrow(/authorization is used or canceled/)
  })

  it("accepts the bytes-signature overload", async () => {
    const authorization = authorizationFor()
    const signature = await signAuthorization(chain.accounts.buyer.privateKey, authorization)
    const { from, to, value, validAfter, validBefore, nonce } = authorization

    const hash = await desk.writeContract({
      address: chain.tokenAddress,
      abi: usdc,
      functionName: "transferWithAuthorization",
      args: [from, to, value, validAfter, validBefore, nonce, signature]
    })

    expect((await desk.waitForTransactionReceipt({ hash })).status).toBe("success")
  })

  it("rejects expired, not-yet-valid and foreign-signed authorizations", async () => {
    const { buyer, other } = chain.accounts
    const expired = authorizationFor({ validBefore: nowSeconds() - 1n })
    const early = authorizationFor({ validAfter: nowSeconds() + 3600n })
    const forged = authorizationFor()

    await expect(submitVrs(expired, await signAuthorization(buyer.privateKey, expired))).rejects.toThrow(
      /authorization is expired/
    )
    await expect(submitVrs(early, await signAuthorization(buyer.privateKey, early))).rejects.toThrow(
      /authorization is not yet valid/
    )
    await expect(submitVrs(forged, await signAuthorization(other.privateKey, forged))).rejects.toThrow(
      /invalid signature/
    )
  })

  it("lets only the payee submit receiveWithAuthorization, and honours cancelAuthorization", async () => {
    const { buyer } = chain.accounts
    const receive = authorizationFor()
    const receiveSignature = await signAuthorization(buyer.privateKey, receive, "ReceiveWithAuthorization")
    const receiveArgs = [
      receive.from,
      receive.to,
      receive.value,
      receive.validAfter,
      receive.validBefore,
      receive.nonce,
      receiveSignature
    ] as const
    const buyerWallet = createWalletClient({
      chain: chain.chain,
      transport: http(),
      account: privateKeyToAccount(buyer.privateKey)
    })

    await expect(
      buyerWallet.writeContract({
        address: chain.tokenAddress,
        abi: usdc,
        functionName: "receiveWithAuthorization",
        args: receiveArgs
      })
    ).rejects.toThrow(/caller must be the payee/)
    const received = await desk.waitForTransactionReceipt({
      hash: await desk.writeContract({
        address: chain.tokenAddress,
        abi: usdc,
        functionName: "receiveWithAuthorization",
        args: receiveArgs
      })
    })
    expect(received.status).toBe("success")

    const cancelled = authorizationFor()
    const cancelSignature = await privateKeyToAccount(buyer.privateKey).signTypedData({
      domain: { name: "USDC", version: "2", chainId: 84532, verifyingContract: chain.tokenAddress },
      types: { CancelAuthorization: [{ name: "authorizer", type: "address" }, { name: "nonce", type: "bytes32" }] },
      primaryType: "CancelAuthorization",
      message: { authorizer: buyer.address, nonce: cancelled.nonce }
    })
    await desk.waitForTransactionReceipt({
      hash: await desk.writeContract({
        address: chain.tokenAddress,
        abi: usdc,
        functionName: "cancelAuthorization",
        args: [buyer.address, cancelled.nonce, cancelSignature]
      })
    })
    await expect(submitVrs(cancelled, await signAuthorization(buyer.privateKey, cancelled))).rejects.toThrow(
      /authorization is used or canceled/
    )
  })

  it("keeps mint to the deployer", async () => {
    await expect(
      desk.writeContract({
        address: chain.tokenAddress,
        abi: usdc,
        functionName: "mint",
        args: [chain.accounts.desk.address, 1n]
      })
    ).rejects.toThrow(/caller is not a minter/)
  })
})

describe("@x402/evm exact scheme against TestUsdc", () => {
  const requirements = () => ({
    scheme: "exact",
    network: "eip155:84532" as const,
    asset: chain.tokenAddress,
    amount: price.toString(),
    payTo: chain.accounts.desk.address,
    maxTimeoutSeconds: 300,
    extra: { name: "USDC", version: "2" }
  })

  const createPayload = async () => {
    const scheme = new ExactEvmClient(toClientEvmSigner(privateKeyToAccount(chain.accounts.buyer.privateKey)))
    const accepted = requirements()
    const { payload } = await scheme.createPaymentPayload(2, accepted)
    return { x402Version: 2, accepted, payload }
  }

  it("produces a payment payload whose authorization the token accepts", async () => {
    const { payload } = await createPayload()
    const { authorization, signature } = payload as {
      authorization: { from: Address; to: Address; value: string; validAfter: string; validBefore: string; nonce: Hex }
      signature: Hex
    }
    const deskBefore = await balanceOf(chain.accounts.desk.address)

    const receipt = await submitVrs(
      {
        from: authorization.from,
        to: authorization.to,
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce
      },
      signature
    )

    expect(receipt.status).toBe("success")
    expect(await balanceOf(chain.accounts.desk.address)).toBe(deskBefore + price)
  })

  it("verifies and settles through the x402 facilitator, then names a replay", async () => {
    const facilitator = new ExactEvmFacilitator(
      toFacilitatorEvmSigner({
        ...desk,
        address: desk.account.address,
        // x402's structural signer types typed data loosely; viem's overloads want the literal shape.
        verifyTypedData: (args) => desk.verifyTypedData(args as Parameters<typeof desk.verifyTypedData>[0])
      })
    )
    const paymentPayload = await createPayload()

    expect(await facilitator.verify(paymentPayload, paymentPayload.accepted)).toMatchObject({ isValid: true })
    expect(await facilitator.settle(paymentPayload, paymentPayload.accepted)).toMatchObject({
      success: true,
      network: "eip155:84532",
      payer: chain.accounts.buyer.address
    })
    // Multicall3 lets the facilitator diagnose the failed simulation instead of a generic failure.
    expect(await facilitator.verify(paymentPayload, paymentPayload.accepted)).toMatchObject({
      isValid: false,
      invalidReason: "invalid_exact_evm_nonce_already_used"
    })
  })
})
