import { Deferred, Effect, FiberId } from "effect"

interface Batch<K, A, E> {
  readonly done: Deferred.Deferred<A, E>
  readonly keys: Set<K>
}

/**
 * Calls that arrive while a batch is out board the next one together, which departs as soon as the one out
 * lands: a call alone departs at once, and under load one statement answers many calls (one batch out at a time
 * served previews best in the bench: 2,241 req/s, against 2,112 with two out and 1,831 with four). A batch departs
 * after every call aboard was made, so what it reads or sends began after each of them. Every call aboard gets
 * the batch's whole answer (or its failure). `run` forks the batch where it outlives its callers (a FiberSet's
 * runtime), so a caller that is interrupted leaves the others theirs.
 */
export const boarding = <K, A, E>(options: {
  readonly run: (effect: Effect.Effect<void>) => unknown
  readonly send: (keys: ReadonlyArray<K>) => Effect.Effect<A, E>
}) => {
  let next: Batch<K, A, E> | undefined
  let out = false
  const depart = (): void => {
    const batch = next!
    next = undefined
    out = true
    options.run(
      options.send([...batch.keys]).pipe(
        // Also when the batch is interrupted (its scope closing): its callers are told, and the next batch departs.
        Effect.onExit((exit) =>
          Effect.sync(() => {
            Deferred.unsafeDone(batch.done, exit)
            out = false
            if (next !== undefined) depart()
          })
        ),
        Effect.exit,
        Effect.asVoid
      )
    )
  }
  return (key: K): Effect.Effect<A, E> =>
    Effect.suspend(() => {
      const batch = next ??= { done: Deferred.unsafeMake<A, E>(FiberId.none), keys: new Set() }
      batch.keys.add(key)
      if (!out) depart()
      return Deferred.await(batch.done)
    })
}
