import pg from "pg"

type Release = (error?: Error | boolean) => void

/** A statement cancelling another connection's, as @effect/sql-pg sends it through the pool. */
const CANCEL = /pg_cancel_backend\((\d+)\)/
/** Connections a desk opens for cancels, beside its pool. */
export const CANCEL_CONNECTIONS = 2

/**
 * `pool`, with the errors of its idle connections (a server restart, a terminated backend) dropped: the pool drops
 * such a connection itself, and an "error" event nobody listens to would end the process.
 */
export const quiet = (pool: pg.Pool): pg.Pool => pool.on("error", () => {})

/**
 * A pool that never hands out a connection that a cancel may still reach. @effect/sql-pg interrupts a statement
 * by sending `pg_cancel_backend(<its connection's pid>)` through the pool on another connection, and pools the
 * first connection again as soon as that returns or the statement's own answer arrives, whichever is first: the
 * next statement given it either waited behind the one being cancelled, or was cancelled itself by a cancel that
 * reached the server after it had begun ("canceling statement due to user request": 24 of 2,400 statements run
 * right after interruptions on a pool of 4; the bench's own /api/books check, after its clients hung up). A
 * connection that a cancel was sent to is closed here instead of pooled (the server ends whatever it ran) and the
 * pool opens another; cancels run on up to CANCEL_CONNECTIONS connections of their own.
 */
export class SettledPool extends pg.Pool {
  /** Connections (by server pid) a cancel has been sent to since they were handed out. */
  private readonly cancelled = new Set<number>()

  /**
   * Where cancels run: on connections of their own, not the pool's. Through the pool a cancel waited for a free
   * connection, and when every connection was held by a statement being interrupted (each waiting for its cancel)
   * nothing moved until the cancels gave up after 5 s: other requests failed on the pool's connect timeout.
   */
  private cancels: pg.Pool | undefined

  // The pool's query has many overloads; only its text is read here.
  override query = ((...args: Array<unknown>) => {
    const pid = typeof args[0] === "string" ? CANCEL.exec(args[0])?.[1] : undefined
    if (pid === undefined) return (super.query as (...args: Array<unknown>) => unknown)(...args)
    this.cancelled.add(Number(pid))
    this.cancels ??= quiet(new pg.Pool({ ...this.options, max: CANCEL_CONNECTIONS }))
    return (this.cancels.query as (...args: Array<unknown>) => unknown)(...args)
  }) as pg.Pool["query"]

  override end(): Promise<void>
  override end(callback: () => void): void
  override end(callback?: () => void): Promise<void> | void {
    const cancels = this.cancels?.end().catch(() => undefined)
    if (callback === undefined) return Promise.all([super.end(), cancels]).then(() => undefined)
    super.end(() => void Promise.resolve(cancels).then(callback))
  }

  override connect(): Promise<pg.PoolClient>
  override connect(
    callback: (error: Error | undefined, client: pg.PoolClient | undefined, release: Release) => void
  ): void
  override connect(
    callback?: (error: Error | undefined, client: pg.PoolClient | undefined, release: Release) => void
  ): Promise<pg.PoolClient> | void {
    if (callback === undefined) {
      return super.connect().then((client) => {
        this.settledRelease(client, client.release)
        return client
      })
    }
    super.connect((error, client, release) =>
      client === undefined
        ? callback(error, client, release)
        : callback(error, client, this.settledRelease(client, release))
    )
  }

  /** `release` of `client`, closing the connection instead of pooling it when a cancel may still reach it. */
  private settledRelease(client: pg.PoolClient, release: Release): Release {
    const settled: Release = (error) => {
      const cancelled = this.cancelled.delete((client as unknown as { processID: number }).processID)
      release(error || (cancelled ? new Error("a cancel may still reach this connection") : undefined))
    }
    client.release = settled
    return settled
  }
}
