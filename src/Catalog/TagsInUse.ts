import { Effect, Option, SynchronizedRef } from "effect"

/** How long a loaded list serves before it is read again, so that tags filed through other desks show up. */
export const TAGS_RELOAD_AFTER_MS = 60_000

interface Loaded {
  readonly tags: ReadonlyArray<string>
  readonly loadedAt: number
}

const merged = (tags: ReadonlyArray<string>, added: ReadonlyArray<string>) =>
  added.every((tag) => tags.includes(tag)) ? tags : [...new Set([...tags, ...added])].sort()

/**
 * The tags in use, kept in memory: reading them scans every handoff (2.2 s of PostgreSQL at 1,000,000), and
 * the catalog page and the home page ask on every request. Tags are never removed, so adding each filing's
 * tags as this desk files it keeps the list exact for this desk; it is read again after
 * `TAGS_RELOAD_AFTER_MS`. Callers that arrive during a load wait for it instead of starting their own.
 */
export const makeTagsInUse = (load: Effect.Effect<ReadonlyArray<string>>, now: () => number = Date.now) =>
  Effect.map(SynchronizedRef.make(Option.none<Loaded>()), (state) => ({
    get: SynchronizedRef.modifyEffect(state, (current): Effect.Effect<readonly [ReadonlyArray<string>, Option.Option<Loaded>]> =>
      Option.isSome(current) && now() - current.value.loadedAt < TAGS_RELOAD_AFTER_MS
        ? Effect.succeed([current.value.tags, current])
        : Effect.map(load, (tags) => [tags, Option.some({ tags, loadedAt: now() })])),
    /** After a filing has committed: waits for a load in progress, whose snapshot may predate the filing. */
    add: (tags: ReadonlyArray<string>) =>
      SynchronizedRef.update(state, Option.map((loaded) => ({ ...loaded, tags: merged(loaded.tags, tags) })))
  }))
