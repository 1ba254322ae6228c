import { type Clock, Duration, Effect, Option } from "effect"
import type { CatalogQuery } from "../Domain/Discover.ts"
import { Unavailable } from "../Domain/Errors.ts"
import { readsTagListing } from "./Search.ts"

/** A listing page that starts this many results in, or more, is deep. */
export const DEEP_FROM = 1_000
/** How long a deep page waits for its turn before the desk answers 503. */
export const DEEP_WAIT = Duration.seconds(3)
/** How many deep pages may wait for the turn at once; any more are refused at once. */
export const DEEP_WAITING = 4
/** How often a waiting deep page asks again. */
const ASK_EVERY = Duration.millis(20)
/** The longest rest after a read (a read on PGlite has no statement timer to end it). */
const LONGEST_REST_MS = 5_000

/** Milliseconds on the clock's monotonic time: a wall clock set forward during a read must not lengthen its rest. */
const monotonicMillis = (clock: Clock.Clock) => Number(clock.unsafeCurrentTimeNanos() / 1_000_000n)

const busy = new Unavailable({
  message: `This desk reads deep pages (results past ${DEEP_FROM.toLocaleString("en")}) one at a time, resting ` +
    "after each as long as it took, and others have the turn: retry after the Retry-After seconds, or narrow the " +
    "query (q, tag, filters) to reach the results in fewer pages."
})

/**
 * Deep pages of a filtered listing, one at a time per desk, with a rest after each. A page's statement skips every
 * result before it, and a filter makes it walk the sort's index past every handoff the filter leaves out, or read
 * and sort every match: at 1,000,000 handoffs a page 10,000 results into a tag or word of a few percent of the
 * catalog took 0.3-0.8 s of PostgreSQL, against tens of milliseconds for a first page (0.1-0.13 s since such a
 * page builds previews only for its own rows: `pageRows`, src/Catalog/Search.ts). Within its rate limit (3
 * requests a second) one client kept both cores of the database busy that way: text searches beside it went from
 * a 14 ms median to 1.6 s. Read one at a time, and the turn resting after each read as long as the read took, deep
 * pages keep about half of one connection's worth of the database busy at most, whoever asks; everything else
 * goes on beside them. Up to DEEP_WAITING deep pages wait up to `wait` for the turn, then fail as Unavailable (503
 * with Retry-After); any more are refused at once. Waiting pages hold their requests' places in the desk
 * (src/Http/Admission.ts): with every deep page waiting, nine a second from three clients took most of the places
 * and text searches beside them waited 0.5 s; a few waiting let a client's burst of deep pages through, one after
 * another. The turn is taken in the same synchronous step that finds it free, and given back by a finalizer the
 * read cannot escape (failed or interrupted, it still rests). A listing by one tag alone, newest or savings first,
 * is no deep page here: its page is read from the tag's own index entries (src/Catalog/Search.ts), as cheap deep as
 * a text search (at 1,000,000 handoffs 20 such pages a second: p50 16 ms, p99 40 ms).
 */
export const makeDeepPages = (wait: Duration.DurationInput = DEEP_WAIT) =>
  Effect.sync(() => {
    const waitMillis = Duration.toMillis(wait)
    let reading = false
    let waiting = 0
    // When the turn is free again after the last read: as long after it ended as it took (at most LONGEST_REST_MS).
    let restUntil = 0
    return <A, E, R>(query: CatalogQuery, read: Effect.Effect<A, E, R>): Effect.Effect<A, E | Unavailable, R> => {
      if ((query.page - 1) * query.limit < DEEP_FROM || readsTagListing(query)) return read
      const attempt = Effect.clockWith((clock) =>
        Effect.uninterruptibleMask((restore) =>
          Effect.suspend(() => {
            const started = monotonicMillis(clock)
            if (reading || started < restUntil) return Effect.succeed(Option.none<A>())
            reading = true
            return Effect.ensuring(
              restore(Effect.asSome(read)),
              Effect.sync(() => {
                const ended = monotonicMillis(clock)
                reading = false
                restUntil = ended + Math.min(ended - started, LONGEST_REST_MS)
              })
            )
          })
        )
      )
      const until = (deadline: number): Effect.Effect<A, E | Unavailable, R> =>
        Effect.flatMap(attempt, (done) => {
          if (Option.isSome(done)) return Effect.succeed(done.value)
          return Effect.clockWith((clock) =>
            monotonicMillis(clock) >= deadline
              ? Effect.fail(busy)
              : Effect.zipRight(Effect.sleep(ASK_EVERY), until(deadline))
          )
        })
      return Effect.flatMap(attempt, (done) => {
        if (Option.isSome(done)) return Effect.succeed(done.value)
        // A few wait; others are refused at once rather than holding requests' places in the desk meanwhile.
        return Effect.uninterruptibleMask((restore) =>
          Effect.suspend(() => {
            if (waiting >= DEEP_WAITING) return Effect.fail(busy)
            waiting++
            return Effect.ensuring(
              restore(Effect.clockWith((clock) => until(monotonicMillis(clock) + waitMillis))),
              Effect.sync(() => waiting--)
            )
          })
        )
      })
    }
  })
