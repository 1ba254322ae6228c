import type { SettleResponse } from "@x402/core/types"
import { Cause, Context, Duration, Effect, Either, Layer, Option } from "effect"
import { erc20Abi } from "viem"
import { SettlementUnavailable } from "../../src/Domain/Errors.ts"
import { PayoutChannel } from "../../src/Payouts/Rail.ts"
import {
  type AuthorizationLookup,
  type PaymentRail,
  type Rail,
  RailProfile,
  type Refusal,
  Settlement,
  type SettleOutcome,
  type VerifiedPayment
} from "../../src/Settlement.ts"
import { assetDomainProblem } from "./X402AssetDomain.ts"
import { makeChain } from "./X402Chain.ts"
import { type X402Settings, x402Settings } from "./X402Config.ts"
import { makeFacilitator } from "./X402Facilitator.ts"
import { makePayouts } from "./X402Payouts.ts"
import { caipNetwork, checkPayment, paymentRequiredV2, requirementsV1 } from "./X402Requirements.ts"
import * as X402SignIn from "./X402SignIn.ts"

const RETRY_AFTER_SECONDS = 5

/** An error's first line; a promise's rejection is read through Effect's UnknownException, which names none. */
const describe = (error: unknown): string => {
  const cause = error instanceof Cause.UnknownException ? error.error : error
  return cause instanceof Error ? cause.message.split("\n")[0]! : String(cause)
}

/**
 * The exact EVM facilitator's verdicts on the payment itself, which no chain event changes (its signature, amount,
 * recipient, domain): such a payment can never pay the desk. Verdicts on the chain's state (nonce already used,
 * balance, validity window, simulation) prove nothing about what this desk already broadcast: the chain decides.
 */
const payloadVerdicts = new Set([
  "invalid_exact_evm_scheme",
  "invalid_exact_evm_network_mismatch",
  "invalid_exact_evm_missing_eip712_domain",
  "invalid_exact_evm_recipient_mismatch",
  "invalid_exact_evm_signature",
  "invalid_exact_evm_authorization_value",
  "invalid_exact_evm_payload_authorization_value_mismatch",
  "invalid_exact_evm_token_name_mismatch",
  "invalid_exact_evm_token_version_mismatch",
  "invalid_exact_evm_eip3009_not_supported",
  "invalid_exact_evm_failed_to_parse_signature",
  "asset_not_deployed_contract",
  "eip6492_factory_not_allowed"
])

const MESSAGES: Record<string, string> = {
  invalid_exact_evm_signature:
    "The signature is not the authorization's `from` signing for this asset, chain and amount (EIP-712 domain in accepts[].extra).",
  invalid_exact_evm_nonce_already_used: "This authorization was already used on-chain; sign a new payment.",
  invalid_exact_evm_insufficient_balance: "The paying address does not hold enough USDC.",
  invalid_exact_evm_payload_authorization_valid_before: "The authorization has expired; sign a fresh one.",
  invalid_exact_evm_payload_authorization_valid_after: "The authorization is not valid yet.",
  invalid_exact_evm_recipient_mismatch: "The authorization must pay the desk wallet (accepts[].payTo)."
}

const host = (url: string) => {
  try {
    return new URL(url).host
  } catch {
    return "the configured URL"
  }
}

export const make = (settings: X402Settings) =>
  Effect.gen(function*() {
    const chain = makeChain(settings)
    // The URL may carry an API key: name only its host.
    const answered = yield* Effect.tryPromise(() => chain.publicClient.getChainId()).pipe(
      Effect.timeout(Duration.millis(settings.rpcTimeoutMs)),
      Effect.mapError(() => new Error(`DESK_CHAIN_RPC_URL (${host(settings.rpcUrl)}) does not answer eth_chainId`))
    )
    if (answered !== settings.chainId) {
      return yield* Effect.fail(
        new Error(
          `DESK_NETWORK=${settings.network} is chain id ${settings.chainId}, but DESK_CHAIN_RPC_URL ` +
            `(${host(settings.rpcUrl)}) is chain id ${answered}`
        )
      )
    }
    const assetProblem = yield* assetDomainProblem(settings, chain).pipe(
      Effect.mapError(() =>
        new Error(`DESK_CHAIN_RPC_URL (${host(settings.rpcUrl)}) does not answer reads of DESK_ASSET_ADDRESS`)
      )
    )
    if (assetProblem !== undefined) return yield* Effect.fail(new Error(assetProblem))
    const facilitator = makeFacilitator(settings, chain)
    const payouts = makePayouts(settings, chain)
    const rpcTimeout = Duration.millis(settings.rpcTimeoutMs)
    // A lookup is a handful of calls (head, authorizationState, logs, receipt); the facilitator's settle is a
    // broadcast and a bounded wait. One attempt is a lookup, a settle and a lookup: a claim's lease covers it.
    const lookupTimeout = Duration.millis(settings.rpcTimeoutMs * 6)
    const facilitatorTimeout = Duration.millis(settings.rpcTimeoutMs * 2 + settings.confirmTimeoutMs)
    const settleTimeout = Duration.sum(facilitatorTimeout, Duration.times(lookupTimeout, 2))
    const explorer = settings.explorerUrl

    const profile: Rail = {
      stage: settings.network === "base" ? "mainnet" : "testnet",
      network: settings.network,
      label: `x402 USDC on ${settings.network} (${facilitator.kind} facilitator)`,
      asset: "USDC",
      assetAddress: settings.asset.address,
      eip712: { name: settings.asset.name, version: settings.asset.version },
      payTo: settings.payTo,
      x402Ready: true,
      facilitatorKind: facilitator.kind,
      payoutEnabled: Option.isSome(payouts),
      explorerTxUrl: (txHash) => Option.getOrNull(Option.map(explorer, (url) => `${url}/tx/${txHash}`)),
      note: `Unlocks with X-PAYMENT (x402 v1) or PAYMENT-SIGNATURE (v2) settle ${settings.asset.name} on ` +
        `${settings.network} to ${settings.payTo}; without a payment header a desk receipt is written unless payment is required.`
    }

    const unavailable = (what: string) =>
      new SettlementUnavailable({
        message: `${what} does not answer; nothing was charged. Retry the same request in a few seconds.`,
        retryAfterSeconds: RETRY_AFTER_SECONDS
      })

    /** A facilitator that answers 401 or 403 refuses the desk's credentials: waiting will not help the buyer. */
    const facilitatorDown = (error: unknown) =>
      /\((401|403)\)/.test(describe(error))
        ? new SettlementUnavailable({
          message: "The facilitator refuses this desk's credentials; nothing was charged. The desk's operator must " +
            "fix DESK_FACILITATOR_TOKEN or DESK_FACILITATOR_HEADERS; retry later.",
          retryAfterSeconds: RETRY_AFTER_SECONDS
        })
        : unavailable(facilitator.kind === "local" ? "The chain RPC" : "The facilitator")

    const lookup = (payment: VerifiedPayment, fromBlock: bigint): Effect.Effect<AuthorizationLookup> =>
      Effect.tryPromise(() => chain.lookup(payment, fromBlock)).pipe(
        Effect.timeout(lookupTimeout),
        Effect.catchAll((error) => Effect.succeed({ _tag: "Unknown", detail: describe(error) } as const))
      )

    /**
     * Whether the chain answers the calls a verification makes: a block number, the asset's code and a call into it.
     * An RPC that refuses eth_call alone fails x402's simulation as if the payment were bad.
     */
    const chainAnswers = Effect.tryPromise(() =>
      Promise.all([
        chain.publicClient.getBlockNumber({ cacheTime: 0 }),
        chain.publicClient.getCode({ address: settings.asset.address }),
        chain.publicClient.readContract({
          address: settings.asset.address,
          abi: erc20Abi,
          functionName: "balanceOf",
          args: [settings.payTo]
        })
      ])
    ).pipe(
      Effect.timeout(rpcTimeout),
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    )

    /** The facilitator's verification; a refusal counts only if the chain answered, else an outage looks like one. */
    const verdict = (payment: VerifiedPayment): Effect.Effect<Option.Option<Refusal>, SettlementUnavailable> =>
      Effect.tryPromise(() => facilitator.verify(payment.payment)).pipe(
        Effect.timeout(Duration.times(rpcTimeout, 3)),
        Effect.mapError(facilitatorDown),
        Effect.flatMap((answer) =>
          answer.isValid
            ? Effect.succeed(Option.none())
            : Effect.flatMap(chainAnswers, (up) => {
              if (!up) return Effect.fail(unavailable("The chain RPC"))
              const reason = answer.invalidReason ?? "payment_invalid"
              const message = MESSAGES[reason] ?? answer.invalidMessage ??
                `The facilitator refused the payment: ${reason}.`
              return Effect.succeed(Option.some({ reason, message }))
            })
        )
      )

    /**
     * Whatever the facilitator said, the token decides: a success is believed once the chain shows this
     * authorization's own transfer to the desk, so a (remote) facilitator cannot reveal a body on its word alone;
     * a failure is a refusal only when the chain proves the payment can never pay the desk, or when the
     * facilitator refused the payment itself before broadcasting anything.
     */
    const outcomeOf = (
      payment: VerifiedPayment,
      fromBlock: bigint,
      answer: Either.Either<SettleResponse, unknown>
    ): Effect.Effect<SettleOutcome> =>
      Effect.map(lookup(payment, fromBlock), (found): SettleOutcome => {
        switch (found._tag) {
          case "Used":
            return { _tag: "Settled", transfer: found.transfer }
          case "Spent":
            return { _tag: "NotPaid", reason: found.reason }
          case "Unknown":
            return { _tag: "Unknown", detail: found.detail }
        }
        if (found.expired) return { _tag: "NotPaid", reason: "authorization_expired" }
        if (Either.isLeft(answer)) return { _tag: "Unknown", detail: describe(answer.left) }
        const { errorReason, success, transaction } = answer.right
        if (success) return { _tag: "Unknown", detail: `settled as ${transaction}, not yet seen on-chain` }
        if (transaction === "" && errorReason !== undefined && payloadVerdicts.has(errorReason)) {
          const message = MESSAGES[errorReason] ?? answer.right.errorMessage ??
            `The facilitator refused the payment: ${errorReason}.`
          return { _tag: "Refused", reason: errorReason, message }
        }
        return { _tag: "Unknown", detail: describe(errorReason ?? "settlement failed") }
      })

    const rail: PaymentRail = {
      challenge: (offer) => [requirementsV1(settings, offer)],
      challengeV2: (accepts, error, extensions) => paymentRequiredV2(settings, accepts, error, extensions),
      check: (offer, header, nowSeconds) => checkPayment(settings, offer, header, nowSeconds),
      verify: verdict,
      settle: (payment, fromBlock) =>
        Effect.tryPromise(() => facilitator.settle(payment.payment)).pipe(
          Effect.timeout(facilitatorTimeout),
          Effect.either,
          Effect.flatMap((answer) => outcomeOf(payment, fromBlock, answer))
        ),
      settleTimeout,
      lookup,
      settled: (payment, txHash) =>
        payment.payment.x402Version === 1
          ? {
            x402Version: 1,
            response: { success: true, transaction: txHash, network: settings.network, payer: payment.payerAddress }
          }
          : {
            x402Version: 2,
            response: {
              success: true,
              transaction: txHash,
              network: caipNetwork(settings),
              payer: payment.payerAddress,
              amount: String(payment.amountMicro)
            }
          },
      blockNumber: Effect.tryPromise(() => chain.publicClient.getBlockNumber({ cacheTime: 0 })).pipe(
        Effect.timeout(rpcTimeout),
        Effect.mapError(() => unavailable("The chain RPC"))
      ),
      // Bounded and never failing: the last known answer (adapters/settlement/LastKnown.ts).
      facilitatorReachable: Effect.promise(facilitator.reachable)
    }
    return { rail, profile, payouts }
  })

/**
 * x402 settlement on the configured chain, payouts when the desk holds a wallet key, and sign-in by the wallets
 * that pay; startup fails with one clear line when the RPC is another chain.
 */
export const layer = (settings: X402Settings) =>
  Layer.mergeAll(
    Layer.effectContext(Effect.map(make(settings), ({ payouts, profile, rail }) =>
      Context.make(Settlement, Option.some(rail)).pipe(
        Context.add(RailProfile, profile),
        Context.add(PayoutChannel, payouts)
      ))),
    X402SignIn.layer(settings)
  )

export const layerConfig = Layer.unwrapEffect(Effect.map(x402Settings, layer))
