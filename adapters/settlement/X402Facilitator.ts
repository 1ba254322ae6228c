import { x402Facilitator } from "@x402/core/facilitator"
import { HTTPFacilitatorClient } from "@x402/core/http"
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types"
import { startAssetContractCheck, toFacilitatorEvmSigner } from "@x402/evm"
import { ExactEvmScheme } from "@x402/evm/exact/facilitator"
import { ExactEvmSchemeV1 } from "@x402/evm/exact/v1/facilitator"
import { Option, Redacted } from "effect"
import type { VerifiablePayment } from "../../src/Domain/X402.ts"
import { lastKnown } from "./LastKnown.ts"
import type { Chain } from "./X402Chain.ts"
import type { X402Settings } from "./X402Config.ts"
import { caipNetwork } from "./X402Requirements.ts"

export interface Facilitator {
  readonly kind: "local" | "remote"
  readonly verify: (payment: VerifiablePayment) => Promise<VerifyResponse>
  readonly settle: (payment: VerifiablePayment) => Promise<SettleResponse>
  /** Whether it answers, as last probed (src/Desk/Status.ts): at most one probe every REACHABLE_FRESH_MS. */
  readonly reachable: () => Promise<boolean>
}

/** How long a probe's answer is kept for `/api/status` (adapters/settlement/LastKnown.ts). */
export const REACHABLE_FRESH_MS = 5_000

// x402 passes v1 and v2 payloads through one v2-typed signature and dispatches on x402Version at run time.
const asX402 = (payment: VerifiablePayment) =>
  [payment.payload as unknown as PaymentPayload, payment.requirements as unknown as PaymentRequirements] as const

/** The desk settles with its own wallet through viem: x402's exact EVM facilitator for v1 and v2. */
const local = (settings: X402Settings, chain: Chain): Facilitator => {
  const wallet = Option.getOrThrowWith(
    chain.wallet,
    () => new Error("the local facilitator needs DESK_WALLET_PRIVATE_KEY")
  )
  const signer = toFacilitatorEvmSigner(
    {
      ...wallet,
      address: wallet.account.address,
      // x402's structural signer types typed data loosely; viem's overloads want the literal shape.
      verifyTypedData: (args) => wallet.verifyTypedData(args as Parameters<typeof wallet.verifyTypedData>[0])
    },
    { confirmationTimeoutMs: settings.confirmTimeoutMs }
  )
  const facilitator = new x402Facilitator()
    .register(caipNetwork(settings) as `${string}:${string}`, new ExactEvmScheme(signer))
    .registerV1(settings.network as `${string}:${string}`, new ExactEvmSchemeV1(signer))
  /**
   * x402's exact scheme starts a check that the asset is a contract (eth_getCode) and may return before awaiting
   * it, when the signature check fails first or throws: a failed check is then an unhandled rejection, which ends
   * a Node process with every request in it (an RPC that refused eth_getCode once took the desk down). The same
   * check is made here first and awaited: its failure is this call's (an RPC outage, 503), and its success is
   * cached by x402 for 15 minutes, so the scheme's own check then asks the chain nothing and cannot fail.
   */
  const assetChecked = (payment: VerifiablePayment) =>
    startAssetContractCheck(signer, payment.requirements.network, payment.requirements.asset).await()
  const afterAssetCheck = <A>(payment: VerifiablePayment, onValid: () => Promise<A>, invalid: (reason: string) => A) =>
    assetChecked(payment).then((reason) => (reason === "" ? onValid() : invalid(reason)))
  return {
    kind: "local",
    verify: (payment) =>
      afterAssetCheck(
        payment,
        () => facilitator.verify(...asX402(payment)),
        (invalidReason) => ({ isValid: false, invalidReason, payer: payment.payload.payload.authorization.from })
      ),
    settle: (payment) =>
      afterAssetCheck(
        payment,
        () => facilitator.settle(...asX402(payment)),
        (errorReason) => ({
          success: false,
          errorReason,
          transaction: "",
          network: payment.requirements.network as `${string}:${string}`,
          payer: payment.payload.payload.authorization.from
        })
      ),
    reachable: lastKnown(
      () => chain.publicClient.getChainId().then((id) => id === settings.chainId),
      REACHABLE_FRESH_MS,
      settings.rpcTimeoutMs
    )
  }
}

/** A facilitator over HTTP; a hosted one gets its credentials (DESK_FACILITATOR_TOKEN or _HEADERS) on every call. */
const remote = (settings: X402Settings, url: string): Facilitator => {
  const createAuthHeaders = () => Promise.resolve({ ...Redacted.value(settings.facilitatorHeaders) })
  const client = new HTTPFacilitatorClient({
    url,
    timeoutMs: settings.rpcTimeoutMs + settings.confirmTimeoutMs,
    createAuthHeaders
  })
  const probe = new HTTPFacilitatorClient({ url, timeoutMs: settings.rpcTimeoutMs, createAuthHeaders })
  return {
    kind: "remote",
    verify: (payment) => client.verify(...asX402(payment)),
    settle: (payment) => client.settle(...asX402(payment)),
    reachable: lastKnown(() => probe.getSupported().then(() => true), REACHABLE_FRESH_MS, settings.rpcTimeoutMs)
  }
}

/** One facilitator, chosen by configuration: never a fallback from one to the other. */
export const makeFacilitator = (settings: X402Settings, chain: Chain): Facilitator =>
  Option.match(settings.facilitatorUrl, {
    onNone: () => local(settings, chain),
    onSome: (url) => remote(settings, url)
  })
