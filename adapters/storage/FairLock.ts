import { Effect } from "effect"

/** A lock that is handed to the longest waiter when it is released. */
export interface FairLock {
  /** Waits for the lock; interrupting the wait leaves the queue. */
  readonly take: Effect.Effect<void>
  readonly release: Effect.Effect<void>
  /** Fibers waiting, for tests. */
  readonly waiting: () => number
}

/**
 * Effect's Semaphore wakes every waiter on release and lets whoever runs first take the permit, so under
 * load a statement can wait behind any number of later ones (64 clients on the embedded store saw requests
 * time out). Here a release passes the lock straight to the first waiter: nobody can take it in between.
 */
export const makeFairLock = (): FairLock => {
  let held = false
  const queue: Array<() => void> = []
  const take = Effect.async<void>((resume) => {
    if (!held) {
      held = true
      return resume(Effect.void)
    }
    const wake = () => resume(Effect.void)
    queue.push(wake)
    return Effect.sync(() => {
      const index = queue.indexOf(wake)
      if (index >= 0) queue.splice(index, 1)
    })
  })
  const release = Effect.sync(() => {
    const next = queue.shift()
    if (next === undefined) held = false
    else next()
  })
  return { take, release, waiting: () => queue.length }
}
