import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * True the first time a sign-in nonce is presented, false after: a signed message reads once, on every desk
   * of one database. Nonces whose messages are refused as too old anyway are forgotten on the way.
   */
  const consume = (nonce: string, acceptedUntil: Date) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`DELETE FROM siwx_nonces WHERE accepted_until < now() - interval '1 minute'`
      const inserted = yield* sql`INSERT INTO siwx_nonces (nonce, accepted_until) VALUES (${nonce}, ${acceptedUntil})
        ON CONFLICT (nonce) DO NOTHING RETURNING nonce`
      return inserted.length === 1
    })).pipe(Effect.orDie)

  /** Whether a sign-in nonce was presented already, without presenting it (a HEAD asks what a GET would answer). */
  const used = (nonce: string) =>
    Effect.map(sql`SELECT 1 FROM siwx_nonces WHERE nonce = ${nonce}`, (rows) => rows.length > 0).pipe(Effect.orDie)

  return { consume, used } as const
})

export class SignInNonceRepo extends Context.Tag("SignInNonceRepo")<
  SignInNonceRepo,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer = Layer.effect(SignInNonceRepo, make)
}
