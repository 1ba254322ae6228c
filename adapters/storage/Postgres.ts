import { PgClient } from "@effect/sql-pg"
import { SqlError } from "@effect/sql/SqlError"
import { Config, Duration, Effect, Layer, Predicate, Redacted } from "effect"
import pg from "pg"
import { StartupError } from "../../src/Domain/StartupError.ts"
import {
  Notifications,
  poolSizeConfig,
  preparedStatementsConfig,
  SILENT_GRACE_MS,
  statementTimeoutConfig
} from "../../src/Storage.ts"
import { listenOn } from "./Listener.ts"
import { preparingClient, statementNames } from "./PreparedStatements.ts"
import { readDeadlineClient } from "./ReadDeadline.ts"
import { quiet, SettledPool } from "./SettledPool.ts"

/** What an operator needs to read a connection failure: never the password. */
interface Target {
  readonly url: URL
  readonly host: string
  readonly port: string
  readonly database: string
  readonly user: string
}

const targetOf = (url: Redacted.Redacted): Target | undefined => {
  try {
    const parsed = new URL(Redacted.value(url))
    if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") return undefined
    const user = decodeURIComponent(parsed.username) || "postgres"
    return {
      url: parsed,
      host: parsed.searchParams.get("host") ?? (parsed.hostname || "localhost"),
      port: parsed.port || "5432",
      database: decodeURIComponent(parsed.pathname.slice(1)) || user,
      user
    }
  } catch {
    return undefined
  }
}

const codeOf = (error: unknown): string =>
  Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : ""

const quoteIdent = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, "\"\"")}"`)

/** The connection failure as the case it is, naming what to do about it. */
const explain = (target: Target, error: SqlError): StartupError => {
  const cause = error.cause
  const code = codeOf(cause)
  const reason = cause instanceof Error ? cause.message : error.message
  const at = `${target.host}:${target.port}`
  const message = code === "ECONNREFUSED"
    ? `DATABASE_URL: nothing accepts connections at ${at} (connection refused); start PostgreSQL there or fix the host and port`
    : code === "ENOTFOUND" || code === "EAI_AGAIN"
    ? `DATABASE_URL: the host ${target.host} does not resolve`
    : code === "3D000"
    ? `DATABASE_URL: database "${target.database}" does not exist on ${at}; create it with: CREATE DATABASE ${
      quoteIdent(target.database)
    };`
    : code === "28P01" || code === "28000"
    ? `DATABASE_URL: PostgreSQL at ${at} refused user "${target.user}" (authentication failed: ${reason})`
    : /timed out/i.test(error.message) || /timeout/i.test(reason)
    ? `DATABASE_URL: PostgreSQL at ${at} did not answer within 5 seconds`
    : `DATABASE_URL: cannot connect to PostgreSQL at ${at}: ${reason}`
  return new StartupError({ message })
}

/**
 * The URL with the per-statement time limit as a connection parameter (node-postgres sends it at startup), so
 * every statement on every pooled connection is cancelled after it, whoever runs it. With a limit, a transaction
 * left idle as long as the desk waits for an answer (`limit` + SILENT_GRACE_MS) is ended by the server too: the desk
 * gives up a silent connection then (ReadDeadline), but over a partition its ROLLBACK never arrives, and the
 * transaction it leaves open on the server kept its row locks (a filer's, a payer's) until TCP keepalive gave up,
 * two hours later, every filing or unlock of that identity refused meanwhile. No desk transaction waits between its
 * statements for anything but the desk itself.
 */
export const withStatementTimeout = (url: URL, timeoutMs: number): Redacted.Redacted => {
  const limited = new URL(url)
  limited.searchParams.set("statement_timeout", String(timeoutMs))
  if (timeoutMs > 0) {
    limited.searchParams.set("idle_in_transaction_session_timeout", String(timeoutMs + SILENT_GRACE_MS))
  }
  return Redacted.make(limited.toString())
}

const CONNECT_TIMEOUT = Duration.seconds(5)
const APPLICATION_NAME = "handoff-desk"

/**
 * The client class of the pool's connections: with `prepare`, marked statements run prepared (PreparedStatements);
 * with a statement timeout, each statement is answered within it and a grace or loses its connection (ReadDeadline).
 */
const clientClass = (prepare: boolean, statementTimeoutMs: number) => {
  const base = prepare ? preparingClient(statementNames()) : pg.Client
  return statementTimeoutMs > 0 ? readDeadlineClient(base, statementTimeoutMs + SILENT_GRACE_MS) : base
}

/**
 * The connection pool, open once PostgreSQL answered a first statement (as @effect/sql-pg's own layer opens it,
 * with its failures), closed with the layer. A connection a cancel was sent to is never pooled again (SettledPool).
 */
const openPool = (url: Redacted.Redacted, max: number, prepare: boolean, statementTimeoutMs: number) =>
  Effect.acquireRelease(
    Effect.suspend(() => {
      const pool = new SettledPool({
        connectionString: Redacted.value(url),
        connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
        idleTimeoutMillis: 30_000,
        max,
        application_name: APPLICATION_NAME,
        Client: clientClass(prepare, statementTimeoutMs)
      })
      // A pooled connection that breaks while idle is dropped by the pool; its error has no statement to fail.
      quiet(pool)
      return Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new SqlError({ cause, message: "PgClient: Failed to connect" })
      }).pipe(
        Effect.as(pool),
        Effect.timeoutFail({
          duration: CONNECT_TIMEOUT,
          onTimeout: () =>
            new SqlError({ cause: new Error("Connection timed out"), message: "PgClient: Connection timed out" })
        }),
        // Closed without waiting: a connection attempt still out would hold the startup failure back.
        Effect.tapError(() => Effect.sync(() => void pool.end().catch(() => undefined)))
      )
    }),
    (pool) => Effect.promise(() => pool.end()).pipe(Effect.interruptible, Effect.timeoutOption(1000))
  )

/**
 * PostgreSQL through @effect/sql-pg on the desk's own pool; the pool reconnects by itself after a server restart.
 * A desk that cannot connect at startup says which case it is: malformed URL, refused port, unknown host, missing
 * database, refused user, no answer.
 */
export const layer = (url: Redacted.Redacted) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const [maxConnections, statementTimeoutMs, prepare] = yield* Config.all([
        poolSizeConfig,
        statementTimeoutConfig,
        preparedStatementsConfig
      ])
      const target = targetOf(url)
      if (target === undefined) {
        return Layer.fail(
          new StartupError({
            message:
              "DATABASE_URL is not a PostgreSQL URL; it takes the form postgres://user:password@host:5432/database"
          })
        )
      }
      const connection = withStatementTimeout(target.url, statementTimeoutMs)
      const notifications = Layer.succeed(Notifications, {
        listen: listenOn({
          connectionString: Redacted.value(connection),
          connectionTimeoutMillis: Duration.toMillis(CONNECT_TIMEOUT),
          application_name: APPLICATION_NAME
        })
      })
      return PgClient.layerFromPool({
        acquire: openPool(connection, maxConnections, prepare, statementTimeoutMs)
      }).pipe(Layer.catchAll((error) => Layer.fail(explain(target, error))), Layer.merge(notifications))
    })
  )
