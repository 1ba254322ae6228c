import { Config, Data, Effect, Option } from "effect"
import cluster, { type Worker } from "node:cluster"
import { StartupError } from "./Domain/StartupError.ts"

/** Whether this process is one of DESK_WORKERS desks forked by a primary (which then serves nothing itself). */
export const isWorker = cluster.isWorker

const present = (name: string) =>
  Config.string(name).pipe(Config.option, Config.map(Option.exists((value) => value.trim() !== "")))

/**
 * How many desk processes to run on the one port: DESK_WORKERS, 1 by default. Several need PostgreSQL (the
 * embedded store belongs to one process) and Redis, or each would keep its own rate budget per client.
 */
export const workersConfig = Effect.gen(function*() {
  const workers = yield* Config.integer("DESK_WORKERS").pipe(
    Config.validate({ message: "DESK_WORKERS must be between 1 and 64", validation: (n) => n >= 1 && n <= 64 }),
    Config.withDefault(1)
  )
  if (workers === 1) return workers
  if (!(yield* present("DATABASE_URL"))) {
    return yield* new StartupError({
      message: `DESK_WORKERS=${workers} needs PostgreSQL (DATABASE_URL): the embedded store serves one process; ` +
        "unset DESK_WORKERS or set DATABASE_URL"
    })
  }
  if (!(yield* present("REDIS_URL"))) {
    return yield* new StartupError({
      message: `DESK_WORKERS=${workers} needs REDIS_URL so the workers share one rate limit per client; ` +
        "set REDIS_URL or unset DESK_WORKERS"
    })
  }
  return workers
})

/**
 * A desk worker that exited once every worker was serving: the others are stopped with it. Not a failure to
 * start, and said so (src/main.ts): the operator looks for why a running desk died, not at its settings.
 */
export class WorkerExited extends Data.TaggedError("WorkerExited")<{ readonly message: string }> {}

/** What a worker tells the primary (IPC): it serves, or why it cannot start (the primary says it, once). */
type WorkerNews = { readonly ready: true } | { readonly cannotStart: string }

const isNews = (message: unknown): message is WorkerNews =>
  typeof message === "object" && message !== null && ("ready" in message || "cannotStart" in message)

/** In a worker: tells the primary its desk is built and serving. */
export const tellReady = () => {
  if (process.connected) process.send?.({ ready: true } satisfies WorkerNews)
}

/** In a worker: tells the primary why its desk cannot start; the primary says it on stderr, for every worker once. */
export const tellCannotStart = (reason: string) =>
  new Promise<void>((sent) => {
    // A primary already gone (killed): nobody to tell.
    if (process.send === undefined || !process.connected) return sent()
    try {
      process.send({ cannotStart: reason } satisfies WorkerNews, () => sent())
    } catch {
      sent()
    }
  })

const exitOf = (worker: Worker) =>
  new Promise<void>((resolve) => {
    if (worker.isDead()) resolve()
    else worker.once("exit", () => resolve())
  })

/**
 * Forks `n` desks that share the listening port (node:cluster hands connections to them in turn) and runs until
 * one exits: a desk that dies takes the others down, so whatever supervises the primary restarts the set
 * (the workers run their migrations, payouts and reconciliation as separate desks on one database do).
 * Interrupted (SIGTERM, SIGINT), it stops every worker and waits for them. A worker that exits before every one
 * serves (its whole desk built: store, migrations and all, not only listening) fails the start (StartupError,
 * with the reason the first worker that could not start gave); one that exits later, the running set
 * (WorkerExited).
 */
export const superviseWorkers = (n: number) =>
  Effect.async<never, StartupError | WorkerExited>((resume) => {
    const workers = Array.from({ length: n }, () => cluster.fork())
    const ready = new Set<number>()
    let reason: string | undefined
    cluster.on("message", (worker, message: unknown) => {
      if (!isNews(message)) return
      if ("ready" in message) ready.add(worker.id)
      else reason ??= message.cannotStart
    })
    let stopping = false
    const stopAll = () => {
      stopping = true
      for (const worker of workers) if (!worker.isDead()) worker.process.kill("SIGTERM")
      return Promise.all(workers.map(exitOf))
    }
    cluster.on("exit", (worker, code, signal) => {
      if (stopping) return
      const serving = ready.size === n
      const message = `desk worker ${worker.process.pid} exited (${signal ?? code}); stopped the others`
      void stopAll().then(() =>
        resume(Effect.fail(
          serving
            ? new WorkerExited({ message: reason === undefined ? message : `${message}: ${reason}` })
            : new StartupError({ message: reason ?? message })
        ))
      )
    })
    return Effect.promise(stopAll)
  })
