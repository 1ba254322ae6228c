import { Cause, Option, Predicate } from "effect"

/** What a client is told to wait while the database is away: the pool's connect timeout. */
export const RETRY_AFTER_SECONDS = 5

// Node socket errors, PostgreSQL's connection_exception class (08xxx), admin shutdown, crash shutdown,
// "cannot connect now" (starting up or shutting down) and too_many_connections.
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "57P01",
  "57P02",
  "57P03",
  "53300"
])

// node-postgres reports a dropped or refused connection with these messages and no code.
const CONNECTION_MESSAGES =
  /connection terminated|not queryable|timeout exceeded when trying to connect|connection timed out|connect ECONNREFUSED/i

const codeOf = (cause: unknown): string =>
  Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : ""

const messageOf = (cause: unknown): string =>
  Predicate.hasProperty(cause, "message") && typeof cause.message === "string" ? cause.message : ""

/**
 * A SqlError caused by the database being unreachable, as opposed to a bad statement: the first is a
 * 503 the client may retry, the second a 500 someone must fix.
 */
export const isDatabaseOutage = (error: unknown): boolean => {
  if (!Predicate.isTagged(error, "SqlError")) return false
  if (/^(Failed to acquire connection|Connection error|PgClient: )/.test(messageOf(error))) return true
  const cause = Predicate.hasProperty(error, "cause") ? error.cause : undefined
  const code = codeOf(cause)
  return CONNECTION_CODES.has(code) || code.startsWith("08") || CONNECTION_MESSAGES.test(messageOf(cause))
}

/** The database failure in a cause, whether a repository let it die (as it should) or failed with it. */
export const databaseOutage = (cause: Cause.Cause<unknown>): Option.Option<unknown> =>
  Cause.find(cause, (reason) => {
    const error = reason._tag === "Die" ? reason.defect : reason._tag === "Fail" ? reason.error : undefined
    return isDatabaseOutage(error) ? Option.some(error) : Option.none()
  })
