import { Cause, Option, Predicate } from "effect"
import { Unavailable } from "../Domain/Errors.ts"

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

/**
 * The database is out of room: disk_full (53100) or out_of_memory (53200), SQLSTATE class 53 but the connection
 * limit (counted as an outage above). The request may pass once there is room: a 503,
 * not a 500 someone must fix in the code (the embedded store on a full disk answered 500 internal_error).
 */
export const isOutOfRoom = (error: unknown): boolean =>
  Predicate.isTagged(error, "SqlError") && Predicate.hasProperty(error, "cause") &&
  (codeOf(error.cause) === "53100" || codeOf(error.cause) === "53200")

/** PostgreSQL cancelled the statement: it ran past DESK_STATEMENT_TIMEOUT_MS (SQLSTATE 57014, query_canceled). */
export const isStatementTimeout = (error: unknown): boolean =>
  Predicate.isTagged(error, "SqlError") && Predicate.hasProperty(error, "cause") && codeOf(error.cause) === "57014"

const findIn = (cause: Cause.Cause<unknown>, test: (error: unknown) => boolean) =>
  Cause.find(cause, (reason) => {
    const error = reason._tag === "Die" ? reason.defect : reason._tag === "Fail" ? reason.error : undefined
    return test(error) ? Option.some(error) : Option.none()
  })

/** The database failure in a cause, whether a repository let it die (as it should) or failed with it. */
export const databaseOutage = (cause: Cause.Cause<unknown>): Option.Option<unknown> => findIn(cause, isDatabaseOutage)

/**
 * What a client is told when the database is the reason a request failed, on REST and MCP alike: unreachable,
 * or a statement cancelled for running too long. Both are a 503 to retry after `RETRY_AFTER_SECONDS`.
 */
export const unavailableFor = (
  cause: Cause.Cause<unknown>
): Option.Option<{ readonly error: Unavailable; readonly reason: unknown }> => {
  const down = databaseOutage(cause)
  if (Option.isSome(down)) {
    const message = `The database does not answer; retry in ${RETRY_AFTER_SECONDS} seconds.`
    return Option.some({ error: new Unavailable({ message }), reason: down.value })
  }
  const full = findIn(cause, isOutOfRoom)
  if (Option.isSome(full)) {
    const message = `The database is out of disk or memory; retry in ${RETRY_AFTER_SECONDS} seconds.`
    return Option.some({ error: new Unavailable({ message }), reason: full.value })
  }
  return Option.map(findIn(cause, isStatementTimeout), (reason) => ({
    error: new Unavailable({
      message: "The database took longer than the desk allows one statement and stopped it; narrow the query " +
        `(fewer matches, a nearer page) or retry in ${RETRY_AFTER_SECONDS} seconds.`
    }),
    reason
  }))
}
