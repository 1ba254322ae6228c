import type { Redacted } from "effect"
import { Config, Context, Effect, Layer, Option } from "effect"
import { boundedInteger, isBaseUrl } from "./Domain/Settings.ts"

export interface DeskSettings {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly paymentRequired: boolean
  /** How often the payout outbox and the settlement reconciler run (they also run right after each paid unlock). */
  readonly outboxIntervalMs: number
  /** First delay before a failed payout is retried; it doubles per attempt, up to 10 minutes. */
  readonly payoutRetryMs: number
}

const settings = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8402)),
  host: Config.nonEmptyString("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicUrl: Config.url("DESK_PUBLIC_URL").pipe(
    Config.validate({
      message: "DESK_PUBLIC_URL must be an http:// or https:// URL with no query, fragment or user:password",
      validation: isBaseUrl
    }),
    Config.option
  ),
  dataDir: Config.nonEmptyString("DESK_DATA_DIR").pipe(Config.withDefault("./.desk-data")),
  databaseUrl: Config.redacted("DATABASE_URL").pipe(Config.option),
  paymentRequired: Config.boolean("DESK_PAYMENT_REQUIRED").pipe(Config.withDefault(false)),
  outboxIntervalMs: boundedInteger("DESK_OUTBOX_INTERVAL_MS", 5_000, 100, 3_600_000),
  payoutRetryMs: boundedInteger("DESK_PAYOUT_RETRY_MS", 10_000, 100, 600_000)
}).pipe(
  Config.map(({ publicUrl, ...rest }): DeskSettings => ({
    ...rest,
    publicUrl: Option.match(publicUrl, {
      onNone: () => `http://${rest.host.includes(":") ? `[${rest.host}]` : rest.host}:${rest.port}`,
      onSome: (url) => url.toString().replace(/\/+$/, "")
    })
  }))
)

export class DeskConfig extends Context.Tag("DeskConfig")<DeskConfig, DeskSettings>() {
  static readonly layer = Layer.effect(DeskConfig, settings)
  static readonly layerWith = (overrides: Partial<DeskSettings>) =>
    Layer.effect(DeskConfig, Effect.map(settings, (base) => ({ ...base, ...overrides })))
}
