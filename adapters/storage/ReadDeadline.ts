import type pg from "pg"

/** A statement that lifts the connection's statement timeout for the rest of its transaction (migrations, ANALYZE). */
const LIFTS = /^\s*SET\s+LOCAL\s+statement_timeout\s*=\s*0\s*$/i
/** The end of a transaction, where a lifted statement timeout comes back. */
const ENDS = /^\s*(?:COMMIT|ROLLBACK)\s*$/i

type Callback = (error: unknown, result: unknown) => void

/**
 * `Base` (a node-postgres client class) whose statements each get an answer within `deadlineMs` or lose their
 * connection. PostgreSQL cancels a statement at the statement timeout itself; a server or link that stops answering
 * (a partition, a stalled server) cancels nothing, and a statement sent to it waited for TCP to give up, minutes
 * later: a filing, an unlock or a transaction's COMMIT held its request and its connection all that time. Past the
 * deadline the connection is closed: the statement and any queued behind it on that connection (the transaction's
 * ROLLBACK) fail at once with ETIMEDOUT, which the desk answers as the database being away (503, Retry-After), and
 * the pool never hands the connection out again. A COMMIT whose answer was lost may have committed; the client is
 * told to retry, and a retried filing or unlock finds what it did (409 `duplicate_body` naming the filing; the
 * first receipt). A connection that lifted its statement timeout (`SET LOCAL statement_timeout = 0`) has no
 * deadline until its transaction ends: migrations and ANALYZE may run long on a large catalog.
 */
export const readDeadlineClient = (Base: typeof pg.Client, deadlineMs: number): typeof pg.Client =>
  class ReadDeadlineClient extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super(config)
      // node-postgres' query has many overloads: @effect/sql-pg calls it with a callback last, others for a promise.
      const query = this.query.bind(this) as (...args: Array<unknown>) => unknown
      let lifted = false
      this.query = ((...args: Array<unknown>) => {
        const first = args[0] as { readonly text?: unknown } | string | undefined
        const text = typeof first === "string" ? first : first?.text
        if (typeof text === "string" && LIFTS.test(text)) lifted = true
        const bounded = !lifted
        if (typeof text === "string" && ENDS.test(text)) lifted = false
        if (!bounded) return query(...args)
        const timer = setTimeout(() => {
          const error = Object.assign(
            new Error(`PostgreSQL sent no answer within ${deadlineMs} ms; the connection is closed`),
            { code: "ETIMEDOUT" }
          )
          this.connection.stream.destroy(error)
        }, deadlineMs)
        const callback = args.at(-1)
        if (typeof callback === "function") {
          return query(...args.slice(0, -1), (error: unknown, result: unknown) => {
            clearTimeout(timer)
            ;(callback as Callback)(error, result)
          })
        }
        // Without a callback node-postgres answers with a promise.
        const answer = query(...args) as Promise<unknown>
        void answer.then(() => clearTimeout(timer), () => clearTimeout(timer))
        return answer
      }) as pg.Client["query"]
    }
  }
