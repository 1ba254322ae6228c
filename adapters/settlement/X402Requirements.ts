import { x402ResourceServer } from "@x402/core/server"
import type { PaymentPayload, PaymentRequired } from "@x402/core/types"
import {
  declarePaymentIdentifierExtension,
  extractAndValidatePaymentIdentifier,
  PAYMENT_ID_MAX_LENGTH,
  PAYMENT_ID_MIN_LENGTH,
  PAYMENT_IDENTIFIER
} from "@x402/extensions/payment-identifier"
import { Either, ParseResult, Schema } from "effect"
import { getAddress, isAddress, isAddressEqual } from "viem"
import type { PaymentRequirementsV1 } from "../../src/Domain/Errors.ts"
import {
  PaymentPayloadV1,
  PaymentPayloadV2,
  type PaymentRequiredV2,
  type PaymentRequirementsV2,
  type VerifiablePayment
} from "../../src/Domain/X402.ts"
import type { Offer, Refusal, VerifiedPayment } from "../../src/Settlement.ts"
import { UNLOCK_DISCOVERY, UNLOCK_OUTPUT_SCHEMA_V1 } from "./X402Bazaar.ts"
import { NEAR_EXPIRY_SECONDS, type X402Settings } from "./X402Config.ts"

/** How far a buyer's clock may run ahead of the desk's: x402 clients sign validBefore = their now + maxTimeoutSeconds. */
const CLOCK_SKEW_SECONDS = 300

export const caipNetwork = (settings: X402Settings) => `eip155:${settings.chainId}`

/**
 * A filed text on one line, as x402's `description` carries it in a header: every run of whitespace and control
 * characters one space (a control character is six characters of JSON; a handoff filed before they were refused
 * could hold hundreds, past what a client takes in one header).
 */
const oneLine = (text: string) => text.replace(/[\p{Cc}\s]+/gu, " ").trim()

/** The one v1 requirement for an offer; built from configuration and the database, never from the request. */
export const requirementsV1 = (settings: X402Settings, offer: Offer): PaymentRequirementsV1 => ({
  scheme: "exact",
  network: settings.network,
  maxAmountRequired: String(offer.priceMicro),
  resource: offer.resource,
  description: `Unlock ${offer.handoffId}: ${oneLine(offer.title)}. ${oneLine(offer.teaser)}`,
  mimeType: "application/json",
  payTo: settings.payTo,
  maxTimeoutSeconds: settings.maxTimeoutSeconds,
  asset: settings.asset.address,
  extra: { name: settings.asset.name, version: settings.asset.version },
  outputSchema: UNLOCK_OUTPUT_SCHEMA_V1
})

export const toV2 = (settings: X402Settings, requirement: PaymentRequirementsV1): PaymentRequirementsV2 => ({
  scheme: requirement.scheme,
  network: caipNetwork(settings),
  amount: requirement.maxAmountRequired,
  asset: requirement.asset,
  payTo: requirement.payTo,
  maxTimeoutSeconds: requirement.maxTimeoutSeconds,
  extra: requirement.extra ?? {}
})

/** The v2 `resource` of a requirement: the unlock's URL, description and media type. */
const resourceOf = (requirement: PaymentRequirementsV1 | undefined): PaymentRequiredV2["resource"] => ({
  url: requirement?.resource ?? "",
  description: requirement?.description ?? "",
  mimeType: requirement?.mimeType ?? "application/json"
})

export const paymentRequiredV2 = (
  settings: X402Settings,
  accepts: ReadonlyArray<PaymentRequirementsV1>,
  error: string | undefined,
  extensions: Readonly<Record<string, unknown>> = {}
): PaymentRequiredV2 => ({
  x402Version: 2,
  ...(error === undefined ? {} : { error }),
  resource: resourceOf(accepts[0]),
  accepts: accepts.map((_) => toV2(settings, _)),
  extensions: { ...CHALLENGE_EXTENSIONS, ...extensions }
})

/** What a v2 challenge declares beside its requirements: Bazaar discovery, and payment ids taken (not required). */
const CHALLENGE_EXTENSIONS = {
  ...UNLOCK_DISCOVERY,
  [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false)
}

const PaymentPayload = Schema.Union(PaymentPayloadV1, PaymentPayloadV2)

const refuse = (reason: string, message: string) => Either.left<Refusal>({ reason, message })

/** The most of one schema issue a refusal quotes: a union's own message spells out every member's whole type. */
const ISSUE_CHARS = 160

/** Where a payload first departs from the x402 payload schemas, in a line: its path and what was expected there. */
const firstIssue = (error: ParseResult.ParseError) => {
  const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
  if (issue === undefined) return "it matches neither version's payload"
  const message = issue.message.length > ISSUE_CHARS ? `${issue.message.slice(0, ISSUE_CHARS)}...` : issue.message
  return issue.path.length === 0 ? message : `${issue.path.join(".")}: ${message}`
}

const decodeHeader = (header: string) => {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(header.trim())) {
    return refuse("invalid_payment_header", "The payment header must be base64 JSON of an x402 payment payload.")
  }
  let json: unknown
  try {
    json = JSON.parse(Buffer.from(header.trim(), "base64").toString("utf8"))
  } catch {
    return refuse(
      "invalid_payment_header",
      "The payment header is base64 but not of JSON: send the base64 JSON of an x402 payment payload, signed for one " +
        "of the 402's accepts (an x402 client such as @x402/fetch builds it)."
    )
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(PaymentPayload)(json),
    (error): Refusal => ({
      reason: "invalid_payment_header",
      message: "The payment header is not an x402 v1 or v2 exact EVM payment payload (an x402 client such as " +
        `@x402/fetch builds one from the 402's accepts): ${firstIssue(error)}.`
    })
  )
}

const sameAddress = (a: string, b: string) =>
  isAddress(a, { strict: false }) && isAddress(b, { strict: false }) && isAddressEqual(a, b)

/** v2 clients echo the requirement they accepted; each field must be the desk's own, named when it differs. */
const acceptedMismatch = (accepted: PaymentRequirementsV2, ours: PaymentRequirementsV2) => {
  if (accepted.scheme !== ours.scheme) return refuse("unsupported_scheme", `Only the "exact" scheme is accepted.`)
  if (accepted.network !== ours.network) {
    return refuse("invalid_network", `This desk settles on ${ours.network}, not ${accepted.network}.`)
  }
  if (!sameAddress(accepted.asset, ours.asset)) return refuse("invalid_asset", `Pay in the asset ${ours.asset}.`)
  if (!sameAddress(accepted.payTo, ours.payTo)) return refuse("invalid_pay_to", `Pay to the desk wallet ${ours.payTo}.`)
  if (accepted.amount !== ours.amount) {
    return refuse("invalid_amount", `This handoff costs exactly ${ours.amount} micro-USDC, not ${accepted.amount}.`)
  }
  if (
    accepted.maxTimeoutSeconds !== ours.maxTimeoutSeconds || accepted.extra["name"] !== ours.extra["name"] ||
    accepted.extra["version"] !== ours.extra["version"]
  ) {
    return refuse(
      "requirements_mismatch",
      "The accepted requirements differ from this desk's challenge; request a fresh 402."
    )
  }
  return Either.void
}

/** x402's own resource server, used only for its rule on extension echoes; it never talks to a facilitator. */
const echoRule = new x402ResourceServer()

/**
 * A v2 client echoes the challenge's extensions; as x402's resource server (`validateExtensions`), what the desk
 * declared must come back unchanged (a client may add to it: the payment id).
 */
const echoMismatch = (payload: PaymentPayloadV2) => {
  const declared = { extensions: CHALLENGE_EXTENSIONS } as unknown as PaymentRequired
  const verdict = echoRule.validateExtensions(declared, payload as unknown as PaymentPayload)
  return verdict.valid ? Either.void : refuse(
    "extension_echo_mismatch",
    `The payment echoes the "${verdict.extensionKey}" extension other than this desk declared it; ` +
      "echo the challenge's extensions as they came."
  )
}

/**
 * What the facilitator is sent: the desk's own resource and declarations, and of the client's additions only the
 * checked payment id. The authorization is all the client signed; the rest, forwarded as the client wrote it,
 * would let a buyer rewrite what a facilitator's Bazaar catalog records about the desk's resource.
 */
const forwarded = (payload: PaymentPayloadV2, resource: PaymentRequiredV2["resource"]): PaymentPayloadV2 => {
  const paymentId = payload.extensions?.[PAYMENT_IDENTIFIER]
  return {
    ...payload,
    resource,
    extensions: { ...CHALLENGE_EXTENSIONS, ...(paymentId === undefined ? {} : { [PAYMENT_IDENTIFIER]: paymentId }) }
  }
}

/** The payment-identifier extension's id, read and checked by x402's own helper; none when the client sent none. */
const paymentIdOf = (payload: PaymentPayloadV2) => {
  // A client that echoes the challenge's declaration without an id (as @x402/fetch does) sent none.
  const { id, validation } = extractAndValidatePaymentIdentifier(payload as unknown as PaymentPayload)
  return validation.valid
    ? Either.right(id)
    : refuse(
      "invalid_payment_identifier",
      `The payment-identifier extension is malformed (${
        (validation.errors ?? []).join("; ")
      }): its id is ${PAYMENT_ID_MIN_LENGTH}-${PAYMENT_ID_MAX_LENGTH} letters, digits, "_" or "-".`
    )
}

/**
 * Every check that needs no chain: the facilitator then checks the signature, balance and nonce on-chain. Without
 * `nowSeconds`, all but the validity window's: a payment claimed already was judged on its time when it was.
 */
export const checkPayment = (
  settings: X402Settings,
  offer: Offer,
  header: string,
  nowSeconds: number | undefined
): Either.Either<VerifiedPayment, Refusal> =>
  Either.gen(function*() {
    const decoded = yield* decodeHeader(header)
    const v1 = requirementsV1(settings, offer)
    let payment: VerifiablePayment
    let paymentId: string | null = null
    if (decoded.x402Version === 1) {
      if (decoded.scheme !== "exact") return yield* refuse("unsupported_scheme", `Only the "exact" scheme is accepted.`)
      if (decoded.network !== settings.network) {
        return yield* refuse("invalid_network", `This desk settles on ${settings.network}, not ${decoded.network}.`)
      }
      payment = { x402Version: 1, payload: decoded, requirements: v1 }
    } else {
      const ours = toV2(settings, v1)
      yield* acceptedMismatch(decoded.accepted, ours)
      yield* echoMismatch(decoded)
      paymentId = yield* paymentIdOf(decoded)
      payment = { x402Version: 2, payload: forwarded(decoded, resourceOf(v1)), requirements: ours }
    }
    const { authorization } = decoded.payload
    const validBefore = BigInt(authorization.validBefore)
    if (!sameAddress(authorization.to, settings.payTo)) {
      return yield* refuse("invalid_pay_to", `The authorization must pay the desk wallet ${settings.payTo}.`)
    }
    if (authorization.value !== String(offer.priceMicro)) {
      return yield* refuse(
        "invalid_amount",
        `This handoff costs exactly ${offer.priceMicro} micro-USDC; the authorization is for ${authorization.value}.`
      )
    }
    if (nowSeconds !== undefined) yield* timely(settings, validBefore, BigInt(authorization.validAfter), nowSeconds)
    return {
      payerAddress: getAddress(authorization.from),
      nonce: authorization.nonce.toLowerCase(),
      amountMicro: offer.priceMicro,
      validBefore: Number(validBefore),
      payment,
      paymentId
    } satisfies VerifiedPayment
  })

/** The validity window of a payment not claimed yet, at `nowSeconds`. */
const timely = (settings: X402Settings, validBefore: bigint, validAfter: bigint, nowSeconds: number) =>
  Either.gen(function*() {
    if (validAfter > BigInt(nowSeconds)) {
      return yield* refuse("authorization_not_yet_valid", "The authorization's validAfter is in the future.")
    }
    // Settling takes a block or two: an authorization about to expire would fail on-chain after the claim.
    if (validBefore < BigInt(nowSeconds + NEAR_EXPIRY_SECONDS)) {
      return yield* refuse(
        "authorization_expired",
        `The authorization expires within ${NEAR_EXPIRY_SECONDS} seconds; sign a fresh one.`
      )
    }
    // A claim the chain has not decided stays pending until its authorization expires: one valid for ever (a wallet
    // short of the price, a nonce used long ago) would stay pending for ever, retried by the reconciler each round.
    const longest = nowSeconds + settings.maxTimeoutSeconds + CLOCK_SKEW_SECONDS
    if (validBefore > BigInt(longest)) {
      return yield* refuse(
        "authorization_valid_too_long",
        `The authorization is valid until ${validBefore}, more than maxTimeoutSeconds (${settings.maxTimeoutSeconds}) ` +
          `from now (${nowSeconds}, ${CLOCK_SKEW_SECONDS} s of clock skew allowed); sign one valid for maxTimeoutSeconds.`
      )
    }
  })
