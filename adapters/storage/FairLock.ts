import { Effect, type Scope } from "effect"

/** A lock that is handed to the longest waiter when it is released. */
export interface FairLock {
  /**
   * The lock until the scope closes: waits for it, and when the scope closes gives it to the next waiter, or, if it
   * never came, leaves the queue. However the wait ends (interrupted as the lock is handed over included), the lock
   * is never left held by nobody.
   */
  readonly hold: Effect.Effect<void, never, Scope.Scope>
  /** Fibers waiting, for tests. */
  readonly waiting: () => number
}

interface Ticket {
  granted: boolean
  wake: (() => void) | undefined
}

/**
 * Effect's Semaphore wakes every waiter on release and lets whoever runs first take the permit, so under
 * load a statement can wait behind any number of later ones (64 clients on the embedded store saw requests
 * time out). Here a release passes the lock straight to the first waiter: nobody can take it in between.
 *
 * The lock is a ticket's from the moment it is handed over, whether or not its fiber ever runs again: the ticket's
 * finalizer, added before the wait, passes it on. (A lock taken by an effect and given back by a finalizer added
 * after it was lost when the fiber was interrupted in between: a statement interrupted as its turn came left the
 * embedded store waiting forever, every later statement behind it.)
 */
export const makeFairLock = (): FairLock => {
  let held = false
  const queue: Array<Ticket> = []

  const passOn = () => {
    const next = queue.shift()
    if (next === undefined) {
      held = false
      return
    }
    next.granted = true
    next.wake?.()
  }
  const done = (ticket: Ticket) =>
    Effect.sync(() => {
      if (ticket.granted) return passOn()
      const index = queue.indexOf(ticket)
      if (index >= 0) queue.splice(index, 1)
    })
  const granted = (ticket: Ticket) =>
    Effect.async<void>((resume) => {
      if (ticket.granted) return resume(Effect.void)
      ticket.wake = () => resume(Effect.void)
    })

  const hold = Effect.uninterruptibleMask((restore) =>
    Effect.suspend(() => {
      const ticket: Ticket = { granted: !held, wake: undefined }
      if (ticket.granted) held = true
      else queue.push(ticket)
      const finalized = Effect.addFinalizer(() => done(ticket))
      return ticket.granted ? finalized : Effect.zipRight(finalized, restore(granted(ticket)))
    })
  )
  return { hold, waiting: () => queue.length }
}
