import { DEFAULT_ASSETS } from "@x402/evm"
import { EVM_NETWORK_CHAIN_ID_MAP } from "@x402/evm/v1"
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { getAddress, type Hex, isAddress } from "viem"
import { privateKeyToAddress } from "viem/accounts"
import { ZERO_ADDRESS } from "../../src/Domain/Agent.ts"
import { boundedInteger, isBaseUrl } from "../../src/Domain/Settings.ts"

export interface X402Settings {
  readonly rpcUrl: string
  /** The x402 v1 network name (`base`, `base-sepolia`, ...). */
  readonly network: string
  readonly chainId: number
  readonly asset: { readonly address: Hex; readonly name: string; readonly version: string }
  readonly payTo: Hex
  readonly walletKey: Option.Option<Redacted.Redacted<Hex>>
  readonly facilitatorUrl: Option.Option<string>
  /** What a hosted facilitator asks for, per call (`verify`, `settle`, `supported`); Redacted, never logged. */
  readonly facilitatorHeaders: Redacted.Redacted<FacilitatorHeaders>
  readonly explorerUrl: Option.Option<string>
  /** Bound on every JSON-RPC (and facilitator) call. */
  readonly rpcTimeoutMs: number
  /** How long a settlement or payout waits for its transaction to be mined before answering "pending". */
  readonly confirmTimeoutMs: number
  /** The validity a buyer is asked to sign for (`maxTimeoutSeconds`). */
  readonly maxTimeoutSeconds: number
}

/** Headers sent to the remote facilitator on each of its three calls. */
export interface FacilitatorHeaders {
  readonly verify: Readonly<Record<string, string>>
  readonly settle: Readonly<Record<string, string>>
  readonly supported: Readonly<Record<string, string>>
}

const FACILITATOR_CALLS = ["verify", "settle", "supported"] as const

const EXPLORERS: Record<string, string> = {
  base: "https://basescan.org",
  "base-sepolia": "https://sepolia.basescan.org"
}

const invalid = (name: string, message: string) => Either.left(ConfigError.InvalidData([name], message))

const chainIdOf = (network: string) =>
  Object.hasOwn(EVM_NETWORK_CHAIN_ID_MAP, network)
    ? Either.right(EVM_NETWORK_CHAIN_ID_MAP[network as keyof typeof EVM_NETWORK_CHAIN_ID_MAP])
    : invalid(
      "DESK_NETWORK",
      `DESK_NETWORK must be an x402 v1 EVM network name (${
        Object.keys(EVM_NETWORK_CHAIN_ID_MAP).join(", ")
      }), got "${network}"`
    )

/** The chain id of a network name DESK_NETWORK accepts. */
export const networkChainId = (network: string): number =>
  EVM_NETWORK_CHAIN_ID_MAP[network as keyof typeof EVM_NETWORK_CHAIN_ID_MAP]

/** The network's own USDC and its EIP-712 domain, when x402 knows one that settles by EIP-3009. */
export const defaultAsset = (chainId: number) =>
  Option.fromNullable(DEFAULT_ASSETS[`eip155:${chainId}`]?.find((_) => _.assetTransferMethod === undefined))

const address = (name: string, value: string) =>
  isAddress(value, { strict: false })
    ? Either.right(getAddress(value))
    : invalid(name, `${name} must be a 20-byte 0x address`)

/** DESK_NETWORK, checked whether or not a chain is configured: a typo must not pass silently. */
export const networkConfig: Config.Config<string> = Config.string("DESK_NETWORK").pipe(
  Config.withDefault("base"),
  Config.mapOrFail((network) => Either.map(chainIdOf(network), () => network))
)

const walletKeyOf = (key: Redacted.Redacted): Either.Either<Redacted.Redacted<Hex>, ConfigError.ConfigError> => {
  const message = "DESK_WALLET_PRIVATE_KEY must be 0x followed by 64 hex characters, a valid secp256k1 private key"
  if (!/^0x[0-9a-fA-F]{64}$/.test(Redacted.value(key))) return invalid("DESK_WALLET_PRIVATE_KEY", message)
  try {
    privateKeyToAddress(Redacted.value(key) as Hex)
    return Either.right(key as Redacted.Redacted<Hex>)
  } catch {
    return invalid("DESK_WALLET_PRIVATE_KEY", message)
  }
}

/** DESK_WALLET_PRIVATE_KEY, checked whether or not a chain is configured; stays Redacted. */
export const walletKeyConfig: Config.Config<Option.Option<Redacted.Redacted<Hex>>> = Config.redacted(
  "DESK_WALLET_PRIVATE_KEY"
)
  .pipe(
    Config.option,
    Config.map(Option.filter((_) => Redacted.value(_).trim() !== "")),
    Config.mapOrFail((key) =>
      Option.match(key, {
        onNone: () => Either.right(Option.none()),
        onSome: (key) => Either.map(walletKeyOf(key), Option.some)
      })
    )
  )

// RFC 9110 token for a field name; a value with a line break or a control character could split the request.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

const HEADERS_FORMAT = "DESK_FACILITATOR_HEADERS must be a JSON object of header names to string values, the " +
  "same for every call ({\"X-Api-Key\":\"...\"}), or one such object per call ({\"verify\":{...},\"settle\":{...}," +
  "\"supported\":{...}})"

const isStringMap = (value: unknown): value is Record<string, string> =>
  typeof value === "object" && value !== null && !Array.isArray(value) &&
  Object.values(value).every((_) => typeof _ === "string")

/** Checks names and values without ever putting a value in the message: they are credentials. */
const checkedHeaders = (headers: Record<string, string>) => {
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_NAME.test(name)) {
      return invalid("DESK_FACILITATOR_HEADERS", `DESK_FACILITATOR_HEADERS names an invalid header "${name}"`)
    }
    if (!HEADER_VALUE.test(value)) {
      return invalid(
        "DESK_FACILITATOR_HEADERS",
        `DESK_FACILITATOR_HEADERS gives header "${name}" a value with a line break or control character`
      )
    }
  }
  return Either.right(headers)
}

/** DESK_FACILITATOR_HEADERS (flat or per call) and DESK_FACILITATOR_TOKEN (a bearer token on every call). */
const facilitatorHeadersOf = (
  headersJson: Option.Option<Redacted.Redacted>,
  token: Option.Option<Redacted.Redacted>
): Either.Either<FacilitatorHeaders, ConfigError.ConfigError> =>
  Either.gen(function*() {
    let parsed: unknown = {}
    if (Option.isSome(headersJson)) {
      try {
        parsed = JSON.parse(Redacted.value(headersJson.value))
      } catch {
        return yield* invalid("DESK_FACILITATOR_HEADERS", HEADERS_FORMAT)
      }
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return yield* invalid("DESK_FACILITATOR_HEADERS", HEADERS_FORMAT)
    }
    // Checked on its own, so a bad token is named as the variable that was set (its value is never printed).
    if (Option.isSome(token) && !HEADER_VALUE.test(Redacted.value(token.value).trim())) {
      return yield* invalid(
        "DESK_FACILITATOR_TOKEN",
        "DESK_FACILITATOR_TOKEN holds a line break or control character"
      )
    }
    const keys = Object.keys(parsed)
    const perCall = keys.length > 0 && keys.every((key) => (FACILITATOR_CALLS as ReadonlyArray<string>).includes(key))
    const calls: Record<string, Record<string, string>> = {}
    for (const call of FACILITATOR_CALLS) {
      const headers: unknown = perCall ? (parsed as Record<string, unknown>)[call] ?? {} : parsed
      if (!isStringMap(headers)) return yield* invalid("DESK_FACILITATOR_HEADERS", HEADERS_FORMAT)
      const bearer = Option.match(token, {
        onNone: () => ({}),
        onSome: (token) => ({ Authorization: `Bearer ${Redacted.value(token).trim()}` })
      })
      calls[call] = yield* checkedHeaders({ ...headers, ...bearer })
    }
    return { verify: calls["verify"]!, settle: calls["settle"]!, supported: calls["supported"]! }
  })

const nonEmpty = (name: string) =>
  Config.string(name).pipe(Config.option, Config.map(Option.filter((_) => _.trim() !== "")))

const nonEmptySecret = (name: string) =>
  Config.redacted(name).pipe(Config.option, Config.map(Option.filter((_) => Redacted.value(_).trim() !== "")))

/**
 * The settings that only a chain uses (where payments go, which token, which facilitator): the first one set, if
 * any. Set without DESK_CHAIN_RPC_URL they would do nothing, and the desk would sell for ledger receipts, silently.
 */
export const chainOnlySetting: Config.Config<Option.Option<string>> = Config.all(
  [
    "DESK_PAY_TO",
    "DESK_ASSET_ADDRESS",
    "DESK_ASSET_NAME",
    "DESK_ASSET_VERSION",
    "DESK_FACILITATOR_URL",
    "DESK_FACILITATOR_HEADERS",
    "DESK_FACILITATOR_TOKEN"
  ].map((name) => Config.map(nonEmptySecret(name), (set) => Option.as(set, name)))
).pipe(Config.map(Option.firstSomeOf))

/** Settling takes a block or two: a new payment that expires within this many seconds is refused. */
export const NEAR_EXPIRY_SECONDS = 30

const raw = Config.all({
  rpcUrl: Config.url("DESK_CHAIN_RPC_URL"),
  network: networkConfig,
  assetAddress: nonEmpty("DESK_ASSET_ADDRESS"),
  assetName: nonEmpty("DESK_ASSET_NAME"),
  assetVersion: nonEmpty("DESK_ASSET_VERSION"),
  payTo: nonEmpty("DESK_PAY_TO"),
  walletKey: walletKeyConfig,
  facilitatorUrl: nonEmpty("DESK_FACILITATOR_URL"),
  facilitatorHeaders: nonEmptySecret("DESK_FACILITATOR_HEADERS"),
  facilitatorToken: nonEmptySecret("DESK_FACILITATOR_TOKEN"),
  // Empty: no explorer links (a local chain).
  explorerUrl: Config.string("DESK_EXPLORER_URL").pipe(
    Config.validate({
      message: "DESK_EXPLORER_URL must be empty or an http:// or https:// URL with no query, fragment or user:password",
      validation: (text) => text.trim() === "" || (URL.canParse(text.trim()) && isBaseUrl(new URL(text.trim())))
    }),
    Config.option
  ),
  rpcTimeoutMs: boundedInteger("DESK_CHAIN_TIMEOUT_MS", 10_000, 100, 600_000),
  confirmTimeoutMs: boundedInteger("DESK_CONFIRM_TIMEOUT_MS", 20_000, 100, 3_600_000),
  // A payment is refused within NEAR_EXPIRY_SECONDS of its expiry: a shorter timeout could sell nothing.
  maxTimeoutSeconds: boundedInteger("DESK_PAYMENT_TIMEOUT_SECONDS", 300, 2 * NEAR_EXPIRY_SECONDS, 86_400, "seconds")
})

/**
 * A remote facilitator's URL: http(s), with no user or password in it (fetch refuses to send those; credentials go
 * in DESK_FACILITATOR_TOKEN or _HEADERS). Never echoed: it may carry an API key.
 */
const facilitatorUrlOf = (url: string) => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return invalid("DESK_FACILITATOR_URL", "DESK_FACILITATOR_URL must be an http:// or https:// URL")
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return invalid("DESK_FACILITATOR_URL", "DESK_FACILITATOR_URL must be an http:// or https:// URL")
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return invalid(
      "DESK_FACILITATOR_URL",
      "DESK_FACILITATOR_URL must not hold a user or password (fetch refuses such URLs): send credentials with " +
        "DESK_FACILITATOR_TOKEN or DESK_FACILITATOR_HEADERS"
    )
  }
  return Either.right(url)
}

/** Every DESK_* chain setting, checked together; the private key stays Redacted and is never logged. */
export const x402Settings: Config.Config<X402Settings> = raw.pipe(
  Config.mapOrFail((c) =>
    Either.gen(function*() {
      const chainId = yield* chainIdOf(c.network)
      const fallback = defaultAsset(chainId)
      const assetAddress = yield* Option.match(
        Option.orElse(c.assetAddress, () => Option.map(fallback, (_) => _.asset)),
        {
          onNone: () =>
            invalid("DESK_ASSET_ADDRESS", `DESK_ASSET_ADDRESS is required: x402 names no USDC for ${c.network}`),
          onSome: (value) => address("DESK_ASSET_ADDRESS", value)
        }
      )
      const name = Option.orElse(c.assetName, () => Option.map(fallback, (_) => _.name))
      const version = Option.orElse(c.assetVersion, () => Option.map(fallback, (_) => _.version))
      if (Option.isNone(name) || Option.isNone(version)) {
        return yield* invalid("DESK_ASSET_NAME", `DESK_ASSET_NAME and DESK_ASSET_VERSION are required for ${c.network}`)
      }
      const walletKey = c.walletKey
      const payTo = yield* Option.match(c.payTo, {
        onSome: (value) => address("DESK_PAY_TO", value),
        onNone: () =>
          Option.match(walletKey, {
            onNone: () =>
              invalid("DESK_PAY_TO", "Set DESK_PAY_TO or DESK_WALLET_PRIVATE_KEY (the desk wallet receives payments)"),
            onSome: (key) => Either.right(privateKeyToAddress(Redacted.value(key)))
          })
      })
      // The token keeps what is sent to it, and nothing can be sent from the zero address: sales would be lost.
      if (payTo === ZERO_ADDRESS || payTo === assetAddress) {
        return yield* invalid(
          "DESK_PAY_TO",
          `DESK_PAY_TO is ${payTo === ZERO_ADDRESS ? "the zero address" : "the USDC token contract itself"}, ` +
            "which cannot pass on what it receives: name the desk's own wallet"
        )
      }
      if (Option.isSome(c.facilitatorUrl)) yield* facilitatorUrlOf(c.facilitatorUrl.value)
      if (Option.isNone(c.facilitatorUrl) && Option.isNone(walletKey)) {
        return yield* invalid(
          "DESK_WALLET_PRIVATE_KEY",
          "The local facilitator settles with the desk wallet: set DESK_WALLET_PRIVATE_KEY, or DESK_FACILITATOR_URL"
        )
      }
      if (
        Option.isNone(c.facilitatorUrl) && (Option.isSome(c.facilitatorHeaders) || Option.isSome(c.facilitatorToken))
      ) {
        return yield* invalid(
          "DESK_FACILITATOR_URL",
          "DESK_FACILITATOR_TOKEN and DESK_FACILITATOR_HEADERS authenticate to a remote facilitator: set " +
            "DESK_FACILITATOR_URL, or unset them"
        )
      }
      const facilitatorHeaders = yield* facilitatorHeadersOf(c.facilitatorHeaders, c.facilitatorToken)
      return {
        rpcUrl: c.rpcUrl.toString(),
        network: c.network,
        chainId,
        asset: { address: assetAddress, name: name.value, version: version.value },
        payTo,
        walletKey,
        facilitatorUrl: c.facilitatorUrl,
        facilitatorHeaders: Redacted.make(facilitatorHeaders),
        // Unset: the network's public explorer; set but empty: no explorer links (a local chain).
        explorerUrl: Option.match(c.explorerUrl, {
          onNone: () => Option.fromNullable(EXPLORERS[c.network]),
          onSome: (url) => (url.trim() === "" ? Option.none() : Option.some(url.trim().replace(/\/+$/, "")))
        }),
        rpcTimeoutMs: c.rpcTimeoutMs,
        confirmTimeoutMs: c.confirmTimeoutMs,
        maxTimeoutSeconds: c.maxTimeoutSeconds
      } satisfies X402Settings
    })
  )
)
