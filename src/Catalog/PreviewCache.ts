import { SqlClient } from "@effect/sql"
import {
  Config,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  FiberSet,
  Layer,
  Option,
  Schema,
  Stream
} from "effect"
import { randomUUID } from "node:crypto"
import { boarding } from "../Boarding.ts"
import type { Preview } from "../Domain/Preview.ts"
import { Notifications } from "../Storage.ts"

/** Where migration 0012 announces each changed handoff's seq; the cache's own pings travel on it too. */
const CHANNEL = "handoff_changed"
const PING = "ping:"
/** How long a cached read waits for its ping before it reads the database instead (and the cache starts over). */
const BARRIER_WAIT = Duration.seconds(1)

export interface PreviewCacheService {
  /** The preview of `seq` from the cache, else from `load` (kept when found and nothing changed it meanwhile). */
  readonly through: <E, R>(
    seq: number,
    load: Effect.Effect<Option.Option<Preview>, E, R>
  ) => Effect.Effect<Option.Option<Preview>, E, R>
}

/** How many previews a desk on PostgreSQL keeps (0: none). */
export const previewCacheConfig = Config.integer("DESK_PREVIEW_CACHE").pipe(
  Config.validate({ message: "DESK_PREVIEW_CACHE must be 0 or more", validation: (n) => n >= 0 }),
  Config.withDefault(10_000)
)

const none: PreviewCacheService = { through: (_, load) => load }

/** Purchase counts by seq, as a ping's statement read them (node-postgres hands jsonb over parsed). */
type Counts = Readonly<Record<string, number>>
const decodePing = Schema.decodeUnknown(
  Schema.Struct({ purchases: Schema.Record({ key: Schema.String, value: Schema.Number }) })
)

interface Load {
  stale: boolean
}

/**
 * Previews by id, at most DESK_PREVIEW_CACHE of them (0: none), kept exact across desks sharing PostgreSQL.
 * A trigger announces every change of a handoff but a sale on LISTEN/NOTIFY at its commit (migrations 0012,
 * 0014); hearing it drops the entry and spoils any read of it in flight. A cached entry is served only after a
 * barrier: a ping sent through the channel after the read began has come back on this desk's listener.
 * PostgreSQL delivers notifications in commit order, so by then every change committed before the read began,
 * through any desk or psql, has been heard: a read never returns a preview older than the last change answered
 * before it, however late this desk hears its database. A sale only moves its handoff's count in handoff_sales
 * (migration 0027), which the ping's own statement reads for the previews waiting on it: that statement begins
 * after the reads, so their counts are as fresh as a read of the row, and sales notify nobody (a notifying commit waits for every other one). Reads
 * arriving while a ping is out share the next one.
 * An entry is kept only from a read that began while the listener was known to hear (a ping came back since it
 * last (re)started or missed one), and only on a preview's second read since the doorkeeper last emptied; a
 * missed ping drops everything. Without PostgreSQL (the embedded store, one
 * desk) there is nothing cached.
 */
const make = Effect.gen(function*() {
  const capacity = yield* previewCacheConfig
  const notifications = yield* Effect.serviceOption(Notifications)
  if (capacity === 0 || Option.isNone(notifications)) return none
  const sql = yield* SqlClient.SqlClient
  const run = yield* FiberSet.makeRuntime<never>()

  const entries = new Map<number, Preview>()
  // The doorkeeper: seqs read once since it last emptied (at `capacity` of them). A preview is kept from its
  // second read on, so reads spread over more previews than the cache holds do not churn it: each entry kept and
  // dropped again unread cost more in tracking and old-generation garbage than the few hits it made.
  const seen = new Set<number>()
  const readBefore = (seq: number) => {
    if (seen.has(seq)) return true
    if (seen.size >= capacity) seen.clear()
    seen.add(seq)
    return false
  }
  const loads = new Map<number, Set<Load>>()
  const pings = new Map<string, Deferred.Deferred<void>>()
  // Counts every moment the listener may have missed an announcement; `heardIn` is the last one it was known to hear.
  let epoch = 0
  let heardIn = -1
  const hearing = () => heardIn === epoch

  const forget = (seq: number) => {
    entries.delete(seq)
    for (const load of loads.get(seq) ?? []) load.stale = true
  }
  const startOver = () => {
    epoch++
    entries.clear()
    for (const set of loads.values()) for (const load of set) load.stale = true
  }
  const heard = (payload: string) =>
    Effect.sync(() => {
      if (!payload.startsWith(PING)) return forget(Number(payload))
      const ping = pings.get(payload.slice(PING.length))
      if (ping !== undefined) Deferred.unsafeDone(ping, Exit.void)
    })

  /**
   * The purchase counts of `seqs` as of now, once a ping sent with them comes back on the listener within
   * `within` with nothing missed meanwhile; none otherwise. One statement sends the ping and reads the counts.
   * A `detached` ping answers at `within` even when its statement cannot be interrupted yet (a silent server or
   * link: its cancellation waits for the server too), leaving the interruption to finish behind it; the watch's
   * own pings wait for it, so an outage never has more than one of them out.
   */
  const ping = (within: Duration.DurationInput, seqs: ReadonlyArray<number>, detached = false) =>
    Effect.gen(function*() {
      const sentIn = epoch
      const nonce = randomUUID()
      const back = yield* Deferred.make<void>()
      pings.set(nonce, back)
      // PgClient.notify sends NOTIFY with a bind parameter, which PostgreSQL refuses; pg_notify takes one.
      const counts = yield* sql`/* prepared */ SELECT pg_notify(${CHANNEL}, ${PING + nonce}) AS ping,
          (SELECT coalesce(jsonb_object_agg(handoff_seq, sales), '{}'::jsonb) FROM handoff_sales
            WHERE handoff_seq = ANY(${seqs}::bigint[])) AS purchases`.pipe(
        Effect.flatMap((rows) => decodePing(rows[0])),
        Effect.map((row): Counts => row.purchases),
        Effect.zipLeft(Deferred.await(back)),
        (statement) => detached ? Effect.disconnect(statement) : statement,
        Effect.timeout(within),
        Effect.map(Option.some),
        Effect.orElseSucceed(() => Option.none<Counts>()),
        Effect.ensuring(Effect.sync(() => pings.delete(nonce)))
      )
      if (sentIn !== epoch) return Option.none<Counts>()
      if (Option.isSome(counts)) heardIn = epoch
      else startOver()
      return counts
    })

  const listen = Effect.forkScoped(Stream.runForEach(notifications.value.listen(CHANNEL), heard))
  let listener = yield* listen
  // Until an answer (LISTEN may not be registered yet when the first ping goes out) pings start quick and wait
  // twice as long after each miss, up to the two seconds a hearing listener gets: a far database is still heard.
  let misses = 0
  const watch = Effect.gen(function*() {
    const within = hearing() ? Duration.seconds(2) : Duration.millis(Math.min(2_000, 250 * 2 ** misses))
    if (Option.isSome(yield* ping(within, []))) {
      misses = 0
      return yield* Effect.sleep(Duration.seconds(1))
    }
    if (++misses % 8 === 0) {
      startOver()
      yield* Fiber.interrupt(listener)
      listener = yield* listen
    }
  })
  yield* Effect.forkScoped(Effect.forever(watch))

  /**
   * Once a ping sent after this call came back (every change committed before it has been heard), the purchase
   * counts read by the ping's statement, which began after this call: as fresh as a read of the row. Reads
   * arriving while a ping is out share the next one. Detached: a reader waits at most BARRIER_WAIT for it.
   */
  const barrier = boarding({ run, send: (seqs: ReadonlyArray<number>) => ping(BARRIER_WAIT, seqs, true) })

  const keep = (seq: number, preview: Preview) => {
    if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
    entries.set(seq, preview)
  }
  const loadAndKeep = <E, R>(seq: number, load: Effect.Effect<Option.Option<Preview>, E, R>) =>
    Effect.suspend(() => {
      if (!hearing()) return load
      const startedIn = epoch
      const token: Load = { stale: false }
      const set = loads.get(seq) ?? new Set()
      loads.set(seq, set.add(token))
      return load.pipe(
        Effect.tap((found) =>
          Effect.sync(() => {
            if (Option.isSome(found) && !token.stale && startedIn === epoch) keep(seq, found.value)
          })
        ),
        Effect.ensuring(Effect.sync(() => {
          set.delete(token)
          if (set.size === 0 && loads.get(seq) === set) loads.delete(seq)
        }))
      )
    })

  return {
    through: (seq, load) =>
      Effect.suspend(() => {
        if (!hearing() || !entries.has(seq)) return readBefore(seq) ? loadAndKeep(seq, load) : load
        return Effect.flatMap(barrier(seq), (counts) => {
          const hit = Option.isSome(counts) ? entries.get(seq) : undefined
          const purchases = Option.isSome(counts) ? counts.value[seq] : undefined
          return hit === undefined || purchases === undefined
            ? loadAndKeep(seq, load)
            : Effect.succeed(Option.some({ ...hit, purchases }))
        })
      })
  } satisfies PreviewCacheService
})

export class PreviewCache extends Context.Tag("PreviewCache")<PreviewCache, PreviewCacheService>() {
  static readonly layer = Layer.scoped(PreviewCache, make)
  static readonly none = Layer.succeed(PreviewCache, none)
}
