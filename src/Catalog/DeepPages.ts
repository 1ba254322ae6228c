import { Clock, Duration, Effect, Option } from "effect"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { Unavailable } from "../Domain/Errors.ts"

/** A listing page that starts this many results in, or more, is deep. */
export const DEEP_FROM = 1_000
/** How long a deep page waits for the one being read before the desk answers 503. */
export const DEEP_WAIT = Duration.seconds(3)
/** How often a waiting deep page asks again. */
const ASK_EVERY = Duration.millis(20)

const busy = new Unavailable({
  message: `This desk reads one deep page (results past ${DEEP_FROM.toLocaleString("en")}) at a time, and another ` +
    "is being read: retry after the Retry-After seconds, or narrow the query (q, tag, filters) to reach the results " +
    "in fewer pages."
})

/**
 * Deep pages of a filtered listing, one at a time per desk. A page's statement skips every result before it, and
 * a filter makes it walk the sort's index past every handoff the filter leaves out, or read and sort every match:
 * at 1,000,000 handoffs a page 10,000 results into a tag or word of a few percent of the catalog took 0.3-0.8 s
 * of PostgreSQL, against tens of milliseconds for a first page. Within its rate limit (3 requests a second) one
 * client could keep two cores of the database busy that way. Read one at a time, deep pages take at most one
 * connection's worth of the database, whoever asks; everything else goes on beside them. A deep page waits up to
 * `wait` for its turn, then fails as Unavailable (503 with Retry-After); a page that fails or is interrupted gives
 * up its turn (`withPermitsIfAvailable` takes and returns it in one uninterruptible step).
 */
export const makeDeepPages = (wait: Duration.DurationInput = DEEP_WAIT) =>
  Effect.map(Effect.makeSemaphore(1), (turn) => {
    const waitMillis = Duration.toMillis(wait)
    return <A, E, R>(query: CatalogQuery, read: Effect.Effect<A, E, R>): Effect.Effect<A, E | Unavailable, R> => {
      if ((query.page - 1) * query.limit < DEEP_FROM) return read
      const attempt = turn.withPermitsIfAvailable(1)(read)
      const until = (deadline: number): Effect.Effect<A, E | Unavailable, R> =>
        Effect.flatMap(attempt, (done) => {
          if (Option.isSome(done)) return Effect.succeed(done.value)
          return Effect.flatMap(
            Clock.currentTimeMillis,
            (now) => now >= deadline ? Effect.fail(busy) : Effect.zipRight(Effect.sleep(ASK_EVERY), until(deadline))
          )
        })
      return Effect.flatMap(Clock.currentTimeMillis, (now) => until(now + waitMillis))
    }
  })
