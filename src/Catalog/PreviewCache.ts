import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Config, Context, Deferred, Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { Preview } from "../Domain/Preview.ts"

/** Where migration 0012 announces each changed handoff's seq; the cache's own pings travel on it too. */
const CHANNEL = "handoff_changed"
const PING = "ping:"
/** How long a change made here keeps its id out of the cache when no announcement comes (rolled back). */
const HOLD_MS = 10_000
/** How long a desk that made a change waits to hear it announced before it answers. */
const ANNOUNCE_WAIT = Duration.seconds(1)

export interface PreviewCacheService {
  /** The preview of `seq` from the cache, else from `load` (kept when found and nothing changed it meanwhile). */
  readonly through: <E, R>(
    seq: number,
    load: Effect.Effect<Option.Option<Preview>, E, R>
  ) => Effect.Effect<Option.Option<Preview>, E, R>
  /**
   * Called inside a transaction that updates the handoff's row (which always announces at commit): not cached
   * here until its announcement is heard (10 s at most: a rolled-back change announces nothing).
   */
  readonly changing: (seq: number) => Effect.Effect<void>
  /** Called when the transaction after `changing` changed nothing after all (it announces nothing): the hold ends. */
  readonly unchanged: (seq: number) => Effect.Effect<void>
  /**
   * Called after that transaction committed, before answering: waits (a second at most) until this desk heard the
   * change announced. PostgreSQL signals every listening desk at the same commit, so once the answer leaves, the
   * other desks have been told too, and a client's next read through any desk sees the change.
   */
  readonly announced: (seq: number) => Effect.Effect<void>
}

const none: PreviewCacheService = {
  through: (_, load) => load,
  changing: () => Effect.void,
  unchanged: () => Effect.void,
  announced: () => Effect.void
}

interface Load {
  stale: boolean
}

/**
 * Previews by id, at most DESK_PREVIEW_CACHE of them (0: none), kept exact across desks sharing PostgreSQL: a
 * trigger announces every change on LISTEN/NOTIFY at its commit, a change made here also holds the id out of
 * the cache until that announcement (10 s at most: a rolled-back change announces nothing), and the desk that
 * made a change answers only once it heard it announced (so every other desk was signalled). The cache serves
 * only while its listener is known to hear: a ping through the channel every second must come back within two,
 * else everything is dropped and the listener reconnected (a change missed by a dead connection is stale for at
 * most that long). Without PostgreSQL (the embedded store) there is nothing cached.
 */
const make = Effect.gen(function*() {
  const capacity = yield* Config.integer("DESK_PREVIEW_CACHE").pipe(
    Config.validate({ message: "DESK_PREVIEW_CACHE must be 0 or more", validation: (n) => n >= 0 }),
    Config.withDefault(10_000)
  )
  const pg = yield* Effect.serviceOption(PgClient.PgClient)
  if (capacity === 0 || Option.isNone(pg)) return none
  const client = pg.value
  const sql = yield* SqlClient.SqlClient

  const entries = new Map<number, Preview>()
  const loads = new Map<number, Set<Load>>()
  // seq -> how many changes made here are not announced yet, and until when (Date.now() ms) they hold it out.
  const held = new Map<number, { count: number; until: number }>()
  // seq -> who waits for its next announcement.
  const waiting = new Map<number, Set<() => void>>()
  const pings = new Map<string, Deferred.Deferred<void>>()
  let live = false

  const forget = (seq: number) => {
    entries.delete(seq)
    for (const load of loads.get(seq) ?? []) load.stale = true
  }
  const forgetAll = () => {
    entries.clear()
    held.clear()
    for (const set of loads.values()) for (const load of set) load.stale = true
  }
  const release = (seq: number) => {
    const hold = held.get(seq)
    if (hold !== undefined && --hold.count <= 0) held.delete(seq)
  }
  const heard = (payload: string) =>
    Effect.sync(() => {
      if (payload.startsWith(PING)) {
        const ping = pings.get(payload.slice(PING.length))
        return ping === undefined ? undefined : Deferred.unsafeDone(ping, Effect.void)
      }
      const seq = Number(payload)
      forget(seq)
      release(seq)
      for (const wake of waiting.get(seq) ?? []) wake()
      waiting.delete(seq)
    })

  const listen = Effect.forkScoped(Stream.runForEach(client.listen(CHANNEL), heard))
  let listener = yield* listen
  const answered = (within: Duration.DurationInput) =>
    Effect.gen(function*() {
      const nonce = randomUUID()
      const ping = yield* Deferred.make<void>()
      pings.set(nonce, ping)
      // PgClient.notify sends NOTIFY with a bind parameter, which PostgreSQL refuses; pg_notify takes one.
      return yield* sql`SELECT pg_notify(${CHANNEL}, ${PING + nonce})`.pipe(
        Effect.zipRight(Deferred.await(ping)),
        Effect.timeout(within),
        Effect.as(true),
        Effect.orElseSucceed(() => false),
        Effect.ensuring(Effect.sync(() => pings.delete(nonce)))
      )
    })
  // Until the first answer (LISTEN may not be registered yet when the first ping goes out) pings are quick.
  let misses = 0
  const watch = Effect.gen(function*() {
    if (yield* answered(live ? Duration.seconds(2) : Duration.millis(250))) {
      live = true
      misses = 0
      return yield* Effect.sleep(Duration.seconds(1))
    }
    if (live) {
      live = false
      forgetAll()
    }
    if (++misses % 8 === 0) {
      yield* Fiber.interrupt(listener)
      listener = yield* listen
    }
  })
  yield* Effect.forkScoped(Effect.forever(watch))

  const isHeld = (seq: number) => {
    const hold = held.get(seq)
    if (hold === undefined) return false
    if (hold.until > Date.now()) return true
    held.delete(seq)
    return false
  }
  const keep = (seq: number, preview: Preview) => {
    if (entries.size >= capacity) entries.delete(entries.keys().next().value!)
    entries.set(seq, preview)
  }

  return {
    through: (seq, load) =>
      Effect.suspend(() => {
        if (!live || isHeld(seq)) return load
        const hit = entries.get(seq)
        if (hit !== undefined) return Effect.succeed(Option.some(hit))
        const token: Load = { stale: false }
        const set = loads.get(seq) ?? new Set()
        loads.set(seq, set.add(token))
        return load.pipe(
          Effect.tap((found) =>
            Effect.sync(() => {
              if (Option.isSome(found) && !token.stale && live && !isHeld(seq)) keep(seq, found.value)
            })
          ),
          Effect.ensuring(Effect.sync(() => {
            set.delete(token)
            if (set.size === 0) loads.delete(seq)
          }))
        )
      }),
    changing: (seq) =>
      Effect.sync(() => {
        forget(seq)
        const hold = held.get(seq)
        held.set(seq, { count: (hold?.count ?? 0) + 1, until: Date.now() + HOLD_MS })
        // Rolled-back changes are never announced; past this many held, start over rather than grow.
        if (held.size > capacity) forgetAll()
      }),
    unchanged: (seq) => Effect.sync(() => release(seq)),
    announced: (seq) =>
      Effect.suspend(() => {
        if (!live || !isHeld(seq)) return Effect.void
        return Effect.async<void>((resume) => {
          const set = waiting.get(seq) ?? new Set()
          const wake = () => resume(Effect.void)
          waiting.set(seq, set.add(wake))
          return Effect.sync(() => {
            set.delete(wake)
            if (set.size === 0 && waiting.get(seq) === set) waiting.delete(seq)
          })
        }).pipe(Effect.timeoutOption(ANNOUNCE_WAIT), Effect.asVoid)
      })
  } satisfies PreviewCacheService
})

export class PreviewCache extends Context.Tag("PreviewCache")<PreviewCache, PreviewCacheService>() {
  static readonly layer = Layer.scoped(PreviewCache, make)
  static readonly none = Layer.succeed(PreviewCache, none)
}
