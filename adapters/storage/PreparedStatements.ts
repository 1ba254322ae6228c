import { createHash } from "node:crypto"
import pg from "pg"
import { PREPARED } from "../../src/Storage.ts"

/**
 * At most this many distinct statements are prepared per desk process (each pooled connection holds its own
 * copy); a marked statement beyond them runs unnamed, as every other statement does.
 */
export const MAX_PREPARED = 64

/**
 * The server-side name of each marked statement text: the same text gets the same name on every connection and
 * in every desk, so node-postgres parses it once per connection and then only binds and executes it.
 */
export const statementNames = (limit = MAX_PREPARED) => {
  const names = new Map<string, string>()
  return (text: string): string | undefined => {
    if (!text.startsWith(PREPARED)) return undefined
    const known = names.get(text)
    if (known !== undefined || names.size >= limit) return known
    const name = `desk_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`
    names.set(text, name)
    return name
  }
}

/**
 * A node-postgres Client that runs the statements marked with PREPARED (fixed-shape, hot statements: see
 * src/Storage.ts) as named prepared statements, and every other statement as before. PostgreSQL then skips parsing
 * and planning them on each run, about half of its work for a one-row lookup.
 */
export const preparingClient = (nameOf: (text: string) => string | undefined): typeof pg.Client =>
  class PreparingClient extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config)
      // node-postgres' query has many overloads; only a string text (what @effect/sql-pg sends) may be marked.
      const query = super.query.bind(this) as (...args: Array<unknown>) => unknown
      this.query = ((text: unknown, ...rest: Array<unknown>) => {
        const name = typeof text === "string" ? nameOf(text) : undefined
        return name === undefined ? query(text, ...rest) : query({ name, text }, ...rest)
      }) as pg.Client["query"]
    }
  }
