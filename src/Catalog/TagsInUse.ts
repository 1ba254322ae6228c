import { Effect, Option, SynchronizedRef } from "effect"

/** How long a loaded list serves before it is read again, so that tags filed through other desks show up. */
export const TAGS_RELOAD_AFTER_MS = 60_000

/** Tags a listing names, most used first; `total` says how many exist. */
export const TAG_LISTING_MAX = 200

export interface TagCount {
  readonly tag: string
  readonly uses: number
}

/** The tags a listing shows and how many tags are in use. */
export interface TagListing {
  readonly tags: ReadonlyArray<string>
  readonly total: number
}

/**
 * Every tag's count, and the `TAG_LISTING_MAX` most used kept in order (uses descending, then by name). Counts
 * only grow between loads, so a tag outside the top can enter it only when its own count grows: each use moves
 * one tag by at most the top's length, and no filing sorts the whole list.
 */
class Counts {
  private readonly uses = new Map<string, number>()
  private readonly top: Array<string> = []
  private listing: TagListing | undefined

  constructor(counts: ReadonlyArray<TagCount>) {
    for (const { tag, uses } of counts) this.uses.set(tag, uses)
    this.top.push(...[...this.uses.keys()].sort((a, b) => this.compare(a, b)).slice(0, TAG_LISTING_MAX))
  }

  private compare(a: string, b: string) {
    return this.uses.get(b)! - this.uses.get(a)! || (a < b ? -1 : a > b ? 1 : 0)
  }

  use(tag: string) {
    this.uses.set(tag, (this.uses.get(tag) ?? 0) + 1)
    let at = this.top.indexOf(tag)
    if (at < 0) {
      if (this.top.length === TAG_LISTING_MAX && this.compare(tag, this.top[TAG_LISTING_MAX - 1]!) > 0) return
      if (this.top.length === TAG_LISTING_MAX) this.top.pop()
      at = this.top.push(tag) - 1
    }
    while (at > 0 && this.compare(tag, this.top[at - 1]!) < 0) {
      this.top[at] = this.top[at - 1]!
      this.top[--at] = tag
    }
    this.listing = undefined
  }

  /** A snapshot: later filings change the counts, not a listing already handed out. */
  get current(): TagListing {
    this.listing ??= { tags: this.top.slice(), total: this.uses.size }
    return this.listing
  }

  /**
   * The listing with `extra` counted once more each (a listing that shows the demo packet counts its tags): only
   * they gain, so the new top is found among the old top and them.
   */
  including(extra: ReadonlyArray<string>): TagListing {
    const added = new Set(extra)
    if (added.size === 0) return this.current
    const uses = (tag: string) => (this.uses.get(tag) ?? 0) + (added.has(tag) ? 1 : 0)
    const tags = [...new Set([...this.top, ...added])]
      .sort((a, b) => uses(b) - uses(a) || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, TAG_LISTING_MAX)
    let total = this.uses.size
    for (const tag of added) if (!this.uses.has(tag)) total++
    return { tags, total }
  }
}

interface Loaded {
  readonly counts: Counts
  readonly loadedAt: number
}

/**
 * The tags in use, kept in memory: the catalog page and the home page ask on every request, and reading them
 * sums the kept per-tag counters (once a scan of every handoff, 1.6-2.2 s of PostgreSQL at 1,000,000). Tags are
 * never removed, so counting each filing's tags as this desk files it keeps the listing exact for this desk; it is
 * read again after `TAGS_RELOAD_AFTER_MS`. Callers that arrive during a load wait for it instead of starting their
 * own.
 */
export const makeTagsInUse = (load: Effect.Effect<ReadonlyArray<TagCount>>, now: () => number = Date.now) =>
  Effect.map(SynchronizedRef.make(Option.none<Loaded>()), (state) => ({
    /** The listing, counting `extra` tags once more each (the demo packet's, where a listing shows it). */
    get: (extra: ReadonlyArray<string> = []) =>
      SynchronizedRef.modifyEffect(
        state,
        (current): Effect.Effect<readonly [TagListing, Option.Option<Loaded>]> =>
          Option.isSome(current) && now() - current.value.loadedAt < TAGS_RELOAD_AFTER_MS
            ? Effect.succeed([current.value.counts.including(extra), current])
            : Effect.map(load, (rows) => {
              const counts = new Counts(rows)
              return [counts.including(extra), Option.some({ counts, loadedAt: now() })]
            })
      ),
    /** After a filing has committed: waits for a load in progress, whose snapshot may predate the filing. */
    add: (tags: ReadonlyArray<string>) =>
      SynchronizedRef.update(state, (current) => {
        if (Option.isSome(current)) { for (const tag of tags) current.value.counts.use(tag) }
        return current
      })
  }))
