import { Duration, Effect } from "effect"
import type { BaseError } from "viem"
import {
  ContractFunctionExecutionError,
  domainSeparator,
  type Hex,
  HttpRequestError,
  parseAbi,
  TimeoutError
} from "viem"
import type { Chain } from "./X402Chain.ts"
import type { X402Settings } from "./X402Config.ts"

const abi = parseAbi([
  "function DOMAIN_SEPARATOR() view returns (bytes32)",
  "function eip712Domain() view returns (bytes1, string, string, uint256, address, bytes32, uint256[])"
])

/** A call the token answered by reverting or with nothing (it has no such function), not one the RPC failed. */
const notImplemented = (error: unknown) =>
  error instanceof ContractFunctionExecutionError &&
  !(error as BaseError).walk((cause) => cause instanceof HttpRequestError || cause instanceof TimeoutError)

/**
 * The one line that refuses a desk whose asset is not what it is configured as, or none when it is. Buyers sign
 * EIP-3009 authorizations over `DESK_ASSET_NAME` and `DESK_ASSET_VERSION` as the challenge names them (the spec's
 * `accepts[].extra`); a token whose own EIP-712 domain differs refuses every such signature, so a desk started with
 * a wrong name would refuse every payment, each after its buyer signed. Checked against the token's
 * `DOMAIN_SEPARATOR()` (USDC's FiatToken has it); a token without one is left to the payments' own checks.
 */
export const assetDomainProblem = (settings: X402Settings, chain: Chain) =>
  Effect.gen(function*() {
    const { address, name, version } = settings.asset
    const client = chain.publicClient
    const within = <A>(call: () => Promise<A>) =>
      Effect.tryPromise(call).pipe(Effect.timeout(Duration.millis(settings.rpcTimeoutMs)))
    const code = yield* within(() => client.getCode({ address }))
    if (code === undefined || code === "0x") {
      return `DESK_ASSET_ADDRESS ${address} is no contract on chain id ${settings.chainId}`
    }
    const separator = yield* within(() => client.readContract({ address, abi, functionName: "DOMAIN_SEPARATOR" })).pipe(
      Effect.catchIf((error) => "error" in error && notImplemented(error.error), () => Effect.succeed(undefined))
    )
    const expected = domainSeparator({
      domain: { name, version, chainId: settings.chainId, verifyingContract: address }
    })
    if (separator === undefined || (separator as Hex).toLowerCase() === expected.toLowerCase()) return undefined
    const itsOwn = yield* within(() => client.readContract({ address, abi, functionName: "eip712Domain" })).pipe(
      Effect.map(([, itsName, itsVersion]) => ` (the token's is name "${itsName}", version "${itsVersion}")`),
      Effect.orElseSucceed(() => "")
    )
    return `DESK_ASSET_NAME "${name}" and DESK_ASSET_VERSION "${version}" are not the EIP-712 domain of the token ` +
      `${address}${itsOwn}: every payment signed for them would be refused`
  })
