import type pg from "pg"
import { afterStatement, OUTSIDE } from "./TransactionScope.ts"

type Callback = (error: unknown, result: unknown) => void

/**
 * `Base` (a node-postgres client class) whose statements each get an answer within `deadlineMs` of being sent or
 * lose their connection. PostgreSQL cancels a statement at the statement timeout itself; a server or link that stops
 * answering (a partition, a stalled server) cancels nothing, and a statement sent to it waited for TCP to give up,
 * minutes later: a filing, an unlock or a transaction's COMMIT held its request and its connection all that time.
 * Past the deadline the connection is closed: the statement and any queued behind it on that connection (the
 * transaction's ROLLBACK) fail at once with ETIMEDOUT, which the desk answers as the database being away (503,
 * Retry-After), and the pool never hands the connection out again. A COMMIT whose answer was lost may have
 * committed; the client is told to retry, and a retried filing or unlock finds what it did (409 `duplicate_body`
 * naming the filing; the first receipt). While a transaction has lifted its statement timeout (`SET LOCAL
 * statement_timeout = 0`: migrations and ANALYZE may run long on a large catalog) its statements have no deadline
 * either (TransactionScope follows the lift to the end of the transaction or a rollback to a savepoint before it).
 * A statement queued behind another on the connection starts its deadline when the one before it is answered.
 */
export const readDeadlineClient = (Base: typeof pg.Client, deadlineMs: number): typeof pg.Client =>
  class ReadDeadlineClient extends Base {
    constructor(config?: string | pg.ClientConfig) {
      super(config)
      // node-postgres' query has many overloads: @effect/sql-pg calls it with a callback last, others for a promise.
      const query = this.query.bind(this) as (...args: Array<unknown>) => unknown
      let scope = OUTSIDE
      // The statements sent and not yet answered, in order: each one's deadline starts when it is first in line.
      const line: Array<{ start: () => void }> = []
      const giveUp = () => {
        const error = Object.assign(
          new Error(`PostgreSQL sent no answer within ${deadlineMs} ms; the connection is closed`),
          { code: "ETIMEDOUT" }
        )
        this.connection.stream.destroy(error)
      }
      this.query = ((...args: Array<unknown>) => {
        const first = args[0] as { readonly text?: unknown } | string | undefined
        const text = typeof first === "string" ? first : first?.text
        if (typeof text === "string") scope = afterStatement(scope, text)
        // A submittable (pg-cursor, pg-query-stream: none of the desk's) answers in its own time, unbounded.
        if (typeof (first as { readonly submit?: unknown } | undefined)?.submit === "function") return query(...args)
        let timer: ReturnType<typeof setTimeout> | undefined
        const turn = { start: scope.lifted ? () => {} : () => void (timer = setTimeout(giveUp, deadlineMs)) }
        line.push(turn)
        if (line.length === 1) turn.start()
        const answered = () => {
          clearTimeout(timer)
          const at = line.indexOf(turn)
          if (at >= 0) line.splice(at, 1)
          // Only the first in line is being answered; the next starts its deadline now. (A connection that fails
          // fails every statement in line, in any order: none of them is started twice.)
          if (at === 0) line[0]?.start()
        }
        const callback = args.at(-1)
        if (typeof callback === "function") {
          return query(...args.slice(0, -1), (error: unknown, result: unknown) => {
            answered()
            ;(callback as Callback)(error, result)
          })
        }
        // Without a callback node-postgres answers with a promise.
        const answer = query(...args) as Promise<unknown>
        void answer.then(answered, answered)
        return answer
      }) as pg.Client["query"]
    }
  }
