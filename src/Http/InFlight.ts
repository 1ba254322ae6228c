import { Context, Duration, Effect } from "effect"
import type { Server, ServerResponse } from "node:http"
import { Server as NetServer, type Socket } from "node:net"

/** Resolves after the event loop has polled its sockets once more. */
const nextPoll = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))

/** How long an idle server waits for requests already sent on its connections before it closes them. */
const SETTLE = Duration.millis(50)

/**
 * The answers a server has begun and not finished: a response counts from the moment Node makes it for a request
 * (its headers read) until it closes (sent, or its client gone). What a desk told to stop waits for.
 */
export class InFlight {
  private readonly open = new Set<ServerResponse>()
  private readonly byConnection = new WeakMap<Socket, Set<ServerResponse>>()
  private readonly whenIdle: Array<() => void> = []
  private stopping = false

  /**
   * Counts `response` until it closes, or until its connection does: a pipelined request still waiting for the
   * answers before it never gets its socket when the client hangs up, and its response never closes (kept here, it
   * would be kept for good). Once the server is stopping, the response's connection closes after it.
   */
  readonly track = (response: ServerResponse): void => {
    this.open.add(response)
    if (this.stopping) response.shouldKeepAlive = false
    const answers = this.answersOf(response.req.socket)
    answers.add(response)
    response.once("close", () => {
      answers.delete(response)
      this.drop(response)
    })
  }

  /** The open answers of `connection`, dropped when it closes: one listener a connection, however many it pipelines. */
  private answersOf(connection: Socket): Set<ServerResponse> {
    const known = this.byConnection.get(connection)
    if (known !== undefined) return known
    const answers = new Set<ServerResponse>()
    this.byConnection.set(connection, answers)
    connection.once("close", () => {
      for (const answer of answers) this.drop(answer)
      answers.clear()
    })
    return answers
  }

  private drop(response: ServerResponse) {
    if (this.open.delete(response) && this.open.size === 0) {
      for (const resume of this.whenIdle.splice(0)) resume()
    }
  }

  /** Every answer begun from now on, and every one not yet under way, closes its connection after it. */
  readonly stop = (): void => {
    this.stopping = true
    for (const response of this.open) if (!response.headersSent) response.shouldKeepAlive = false
  }

  readonly isIdle = (): boolean => this.open.size === 0

  /** Resolves once no answer is open. */
  readonly idle = (): Promise<void> =>
    this.open.size === 0 ? Promise.resolve() : new Promise((resolve) => this.whenIdle.push(resolve))
}

/** How a server stops: it takes no new connection, finishes the requests it took, then closes what is left. */
export class ServerStop extends Context.Tag("ServerStop")<ServerStop, Effect.Effect<void>>() {}

/**
 * `server` stopped gracefully: no new connection is accepted, the requests already taken are answered (and those
 * that still come on open connections meanwhile), for at most `within`, each closing its connection after it, and
 * then every connection left is closed. The database and the services behind the requests must
 * still be open meanwhile: a desk stopped with requests in flight answered them 500 or 503 as its store closed
 * under them (30 filings sent 40 ms before a SIGTERM: 30 failures on the embedded store).
 */
export const stopServer = (server: Server, inFlight: InFlight, within: Duration.DurationInput): Effect.Effect<void> =>
  Effect.suspend(() => {
    if (!server.listening) return Effect.void
    inFlight.stop()
    // Only the listening socket: Node's own `close` would also end every connection with no answer under way, the
    // requests still unread on them included (a burst sent just before the signal was reset, unanswered).
    const stopListening = Effect.sync(() => NetServer.prototype.close.call(server))
    // Idle, then idle still after a turn of the event loop: requests that were waiting to be read are read by then.
    const settled: Effect.Effect<void> = Effect.flatMap(
      Effect.promise(inFlight.idle),
      () =>
        Effect.sleep(SETTLE).pipe(
          Effect.zipRight(Effect.promise(nextPoll)),
          Effect.flatMap(() => inFlight.isIdle() ? Effect.void : settled)
        )
    )
    // The connections already waiting to be accepted are taken first (the event loop's next poll accepts them all):
    // closed under them, the listening socket resets them.
    return Effect.zipRight(Effect.zipRight(Effect.promise(nextPoll), stopListening), settled).pipe(
      Effect.timeoutOption(within),
      Effect.ensuring(Effect.sync(() => server.closeAllConnections())),
      Effect.asVoid
    )
  })
