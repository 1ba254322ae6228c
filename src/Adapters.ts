import type { SqlClient } from "@effect/sql"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import * as MemoryRateStore from "../adapters/ratelimit/Memory.ts"
import * as RedisRateStore from "../adapters/ratelimit/Redis.ts"
import * as DeskReceipt from "../adapters/settlement/DeskReceipt.ts"
import * as X402 from "../adapters/settlement/X402.ts"
import { chainOnlySetting, networkChainId, networkConfig, walletKeyConfig } from "../adapters/settlement/X402Config.ts"
import * as OfferReceipt from "../adapters/signing/OfferReceipt.ts"
import { signingKeyConfig } from "../adapters/signing/OfferReceiptConfig.ts"
import * as Pglite from "../adapters/storage/Pglite.ts"
import * as Postgres from "../adapters/storage/Postgres.ts"
import { DeskConfig } from "./Config.ts"
import { StartupError } from "./Domain/StartupError.ts"
import { policyConfig } from "./RateLimiter.ts"
import { ReceiptSigning } from "./ReceiptSigning.ts"

const nonEmpty = <A>(config: Config.Config<A>, value: (a: A) => string) =>
  config.pipe(Config.option, Config.map(Option.filter((a) => value(a).trim() !== "")))

// The adapters the desk runs on, chosen from configuration here and nowhere else in src/ (the rule
// `adapters-chosen-by-entrypoints` of tools/lint/dependency-cruiser.cjs): src/main.ts and the seed command take them
// from this module. Tools outside the desk use the one adapter their job is about directly: `npm run chain` the
// local chain (scripts/chain.ts), `npm run audit` the x402 audit (scripts/audit.ts), the bench a store of each kind
// (bench/Store.ts).

/** PostgreSQL when DATABASE_URL is set, the embedded PGlite database in DESK_DATA_DIR otherwise; not migrated. */
export const StoreLive = Layer.unwrapEffect(
  Effect.map(DeskConfig, (config) =>
    Option.match(config.databaseUrl, {
      onNone: (): Layer.Layer<SqlClient.SqlClient, unknown> => Pglite.layer({ dataDir: config.dataDir }),
      onSome: Postgres.layer
    }))
)

/** A URL Redis' client takes: it threw a bare "Invalid URL" at startup for anything else, naming no variable. */
const isRedisUrl = (url: string) => {
  try {
    return ["redis:", "rediss:"].includes(new URL(url).protocol)
  } catch {
    return false
  }
}

/** Redis when REDIS_URL is set, so several desks share one budget per client; this process's memory otherwise. */
export const RateLimiterLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const policy = yield* policyConfig
    const url = yield* nonEmpty(Config.redacted("REDIS_URL"), Redacted.value)
    if (Option.isSome(url) && !isRedisUrl(Redacted.value(url.value))) {
      return yield* new StartupError({
        message: "REDIS_URL must be a redis:// or rediss:// URL with a numeric port, such as redis://127.0.0.1:6379"
      })
    }
    return Option.match(url, {
      onNone: () => MemoryRateStore.layer(policy),
      onSome: (url) => RedisRateStore.layer(policy, { url })
    })
  })
)

/**
 * x402 when a chain RPC is configured. Without one, the chain settings given are still checked (a typo must not
 * pass silently), and a desk told to require payment refuses to start rather than answer every unlock with a 402
 * nobody can pay.
 */
export const SettlementLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const rpcUrl = yield* nonEmpty(Config.string("DESK_CHAIN_RPC_URL"), (url) => url)
    if (Option.isSome(rpcUrl)) return X402.layerConfig
    yield* Config.all([networkConfig, walletKeyConfig])
    const unused = yield* chainOnlySetting
    if (Option.isSome(unused)) {
      return yield* new StartupError({
        message: `${unused.value} is set but the desk has no chain to use it: set DESK_CHAIN_RPC_URL, or unset ` +
          `${unused.value} (without a chain the desk writes ledger receipts only)`
      })
    }
    if ((yield* DeskConfig).paymentRequired) {
      return yield* new StartupError({
        message: "DESK_PAYMENT_REQUIRED=true needs a chain to take payments: set DESK_CHAIN_RPC_URL (with " +
          "DESK_WALLET_PRIVATE_KEY or DESK_FACILITATOR_URL), or unset DESK_PAYMENT_REQUIRED"
      })
    }
    return DeskReceipt.layer
  })
)

/** Settlement that moves no money, for commands that record without selling (seeding). */
export const LedgerOnlySettlement = DeskReceipt.layer

/**
 * Offers and receipts are signed by JWS with DESK_RECEIPT_SIGNING_KEY when it is set (a key set for them is the
 * operator's choice, even beside a wallet), else by EIP-712 with the desk wallet (DESK_WALLET_PRIVATE_KEY), and not
 * at all without either.
 */
export const ReceiptSigningLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const [wallet, network, signingKey] = yield* Config.all([walletKeyConfig, networkConfig, signingKeyConfig])
    if (Option.isSome(signingKey)) return OfferReceipt.jws(signingKey.value)
    if (Option.isSome(wallet)) return OfferReceipt.eip712(wallet.value, networkChainId(network))
    return ReceiptSigning.none
  })
)
