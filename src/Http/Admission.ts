import { Config } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { waitsForTurn } from "../Desk/RequestRules.ts"
import { poolSizeConfig } from "../Storage.ts"

/** Emitted by the desk's responses when the app ends them (src/Http/NodeServer.ts), before they are flushed. */
export const ENDED = Symbol("desk:response-ended")

export type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

export interface AdmissionOptions {
  /** How many admitted requests may be inside the app at once. */
  readonly active: number
  /** The client a request counts for (its rate-limit key). */
  readonly clientOf: (request: IncomingMessage) => string
  /**
   * How many of one client's reads may be inside at once (the edge's per-client cap, src/Http/ClientConcurrency.ts):
   * its next ones wait here, in its line, rather than inside the app on a turn another client could use.
   */
  readonly perClient?: number
  /**
   * How many of one client's reads may wait here; one more is answered by `refuse` at once (it is not charged: it
   * never reached the rate limit). A line is one request per connection (src/Http/NodeServer.ts
   * `inConnectionOrder`), so without a bound a client's many connections would each hold a request in memory.
   */
  readonly line?: { readonly size: number; readonly refuse: (response: ServerResponse) => void }
}

/**
 * How many of the reads that wait their turn (`waitsForTurn`) the app works on at once, by default twice the
 * database pool (`DESK_ACTIVE_REQUESTS`): beyond the pool they would only wait for a connection.
 */
export const activeRequestsConfig: Config.Config<number> = Config.all([
  poolSizeConfig,
  Config.integer("DESK_ACTIVE_REQUESTS").pipe(
    Config.validate({
      message: "DESK_ACTIVE_REQUESTS must be between 1 and 100000",
      validation: (n) => n >= 1 && n <= 100_000
    }),
    Config.option
  )
]).pipe(Config.map(([pool, set]) => set._tag === "Some" ? set.value : pool * 2))

type Exchange = readonly [IncomingMessage, ServerResponse]

/** One client's waiting requests, oldest first: read by an index, as `shift` copies a long array each time. */
class Line {
  private items: Array<Exchange | undefined> = []
  private head = 0
  get length() {
    return this.items.length - this.head
  }
  push(exchange: Exchange) {
    this.items.push(exchange)
  }
  take(): Exchange {
    const exchange = this.items[this.head]!
    this.items[this.head++] = undefined
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head)
      this.head = 0
    }
    return exchange
  }
}

const waitsItsTurn = (request: IncomingMessage) =>
  waitsForTurn(request.method ?? "", (request.url ?? "").split("?")[0]!)

/**
 * `listener` with at most `active` reads inside it at once; the others wait as Node's parsed request and response
 * alone, one queue per client, the clients taking turns. A request that waits inside the app (for a database
 * connection, say) keeps its fiber, context and continuations alive across the wait, which under 64 connections
 * outlived two scavenges and went to the old generation: discover by tag cost 1.38 ms of CPU a page that way, 0.95
 * ms waiting here. A turn ends when the app ends its response (not when a slow client has read it) or the
 * connection closes; a request whose client left while it waited is dropped unseen. Which requests wait is
 * `waitsForTurn`'s rule; everything else goes straight to `listener`.
 */
export const admitted = (listener: RequestListener, options: AdmissionOptions): RequestListener => {
  const perClient = options.perClient ?? Infinity
  let inside = 0
  // Reads inside, per client that has any.
  const insideOf = new Map<string, number>()
  const below = (client: string) => (insideOf.get(client) ?? 0) < perClient
  // Per client, its waiting requests; a Map keeps insertion order, so the first key is the client next in turn.
  const waiting = new Map<string, Line>()

  const enter = (request: IncomingMessage, response: ServerResponse, client: string) => {
    inside++
    insideOf.set(client, (insideOf.get(client) ?? 0) + 1)
    let done = false
    const leave = () => {
      if (done) return
      done = true
      inside--
      const left = insideOf.get(client)! - 1
      if (left === 0) insideOf.delete(client)
      else insideOf.set(client, left)
      next()
    }
    // `on`, not `once`: `leave` runs its body once anyway, and once wraps each listener per request.
    response.on(ENDED, leave)
    response.on("close", leave)
    listener(request, response)
  }
  // A request the app answers at once ends its turn inside `enter`, which would call `next` again, one stack frame
  // deeper per waiting request: the loop that is already running lets the next one in instead.
  let admitting = false
  const next = () => {
    if (admitting) return
    admitting = true
    try {
      admitWaiting()
    } finally {
      admitting = false
    }
  }
  /** The first client in turn order with a read waiting and fewer than `perClient` inside. */
  const nextInTurn = () => {
    for (const entry of waiting) if (below(entry[0])) return entry
    return undefined
  }
  const admitWaiting = () => {
    while (inside < options.active && waiting.size > 0) {
      const turn = nextInTurn()
      if (turn === undefined) return
      const [client, line] = turn
      const [request, response] = line.take()
      // The client goes to the back of the turn order, or leaves it with nothing more waiting.
      waiting.delete(client)
      if (line.length > 0) waiting.set(client, line)
      if (!response.destroyed && !request.socket.destroyed) enter(request, response, client)
    }
  }

  return (request, response) => {
    if (!waitsItsTurn(request)) return listener(request, response)
    const client = options.clientOf(request)
    // A free turn, nobody waiting and the client below its cap: in at once.
    if (inside < options.active && waiting.size === 0 && below(client)) return enter(request, response, client)
    const line = waiting.get(client) ?? new Line()
    if (options.line !== undefined && line.length >= options.line.size) return options.line.refuse(response)
    if (line.length === 0) waiting.set(client, line)
    line.push([request, response])
    next()
  }
}
