import { Effect, Fiber, Ref } from "effect"
import type { Scope } from "effect"
import { filing } from "./Fixtures.ts"
import { postJson, send } from "./Loopback.ts"

export interface Acks {
  /** Filings answered 201. */
  readonly filings: Array<{ readonly id: string; readonly title: string }>
  /** Unlocks answered 200. */
  readonly unlocks: Array<{ readonly buyer: string; readonly handoff: string; readonly receiptId: string }>
}

export interface Answer {
  readonly op: "file" | "unlock" | "read"
  readonly at: number
  readonly ms: number
  /** 0 when no response came (connection refused or reset, or no answer within the client timeout). */
  readonly status: number
  readonly error?: string
  readonly retryAfter?: string
  readonly failure?: string
}

export interface LoadOptions {
  readonly url: string
  readonly clients: number
  /** Unique per run: every filing's title starts with it, so a title names one filing attempt. */
  readonly run: string
  readonly filers: ReadonlyArray<string>
  readonly buyers: ReadonlyArray<string>
  /** Handoffs to unlock and read; filings acknowledged during the load join it. */
  readonly handoffs: ReadonlyArray<string>
  /** Stop a client at its first request without a response (the desk was killed) instead of going on. */
  readonly stopOnFailure: boolean
}

export interface Load {
  readonly acks: Acks
  readonly answers: ReadonlyArray<Answer>
  /** Lets every client finish the request it is in, then returns. */
  readonly stop: Effect.Effect<void>
}

const pick = <A>(items: ReadonlyArray<A>, n: number) => items[n % items.length]!

/**
 * Clients that file, unlock and read in turn, each waiting for its answer before the next request, and
 * record every answer and every acknowledged write.
 */
export const startLoad = (options: LoadOptions): Effect.Effect<Load, never, Scope.Scope> =>
  Effect.gen(function*() {
    const acks: Acks = { filings: [], unlocks: [] }
    const answers: Array<Answer> = []
    const handoffs = [...options.handoffs]
    const running = yield* Ref.make(true)

    const once = (client: number, i: number) => {
      const op = (["file", "unlock", "read"] as const)[(client + i) % 3]!
      const n = client * 7919 + i * 104729
      const buyer = pick(options.buyers, n)
      const handoff = pick(handoffs, n)
      const title = `${options.run} client ${client} filing ${i}`
      const filer = pick(options.filers, n)
      const request = op === "file"
        ? postJson(`${options.url}/api/handoffs`, filing(filer, { title, priceUsd: 0.01, reconstructUsd: 1 }), {
          headers: { "x-agent-id": filer }
        })
        : op === "unlock"
        ? postJson(`${options.url}/api/handoffs/${handoff}/unlock`, { payer: buyer }, {
          headers: { "x-agent-id": buyer }
        })
        : send(`${options.url}/api/handoffs/${handoff}`)
      const at = Date.now()
      return request.pipe(
        Effect.timeoutFail({ duration: "20 seconds", onTimeout: () => new Error("no answer in 20 seconds") }),
        Effect.match({
          onFailure: (error): Answer => ({ op, at, ms: Date.now() - at, status: 0, failure: error.message }),
          onSuccess: (reply): Answer => {
            if (op === "file" && reply.status === 201) {
              acks.filings.push({ id: reply.json.id, title })
              handoffs.push(reply.json.id)
            }
            if (op === "unlock" && reply.status === 200) {
              acks.unlocks.push({ buyer, handoff, receiptId: reply.json.receipt.receiptId })
            }
            const retryAfter = reply.headers["retry-after"]
            return {
              op,
              at,
              ms: Date.now() - at,
              status: reply.status,
              ...(reply.json?.error === undefined ? {} : { error: reply.json.error }),
              ...(typeof retryAfter === "string" ? { retryAfter } : {})
            }
          }
        }),
        Effect.tap((answer) => Effect.sync(() => answers.push(answer)))
      )
    }

    const client = (index: number) =>
      Effect.gen(function*() {
        for (let i = 0; yield* Ref.get(running); i++) {
          const answer = yield* once(index, i)
          if (answer.status === 0 && options.stopOnFailure) return
        }
      })

    const fibers = yield* Effect.forEach(
      Array.from({ length: options.clients }, (_, index) => index),
      (index) => Effect.forkScoped(client(index))
    )
    return {
      acks,
      answers,
      stop: Effect.zipRight(Ref.set(running, false), Fiber.joinAll(fibers))
    }
  })

/** Every acknowledged write the desk at `url` no longer shows, described; empty when none is lost. */
export const lostAcks = (url: string, acks: Acks) =>
  Effect.gen(function*() {
    const lost: Array<string> = []
    for (const { id, title } of acks.filings) {
      const reply = yield* send(`${url}/api/handoffs/${id}`, { fresh: true })
      if (reply.status !== 200 || reply.json.title !== title) lost.push(`filing ${id} (${title}): ${reply.status}`)
    }
    const buyers = [...new Set(acks.unlocks.map((_) => _.buyer))]
    for (const buyer of buyers) {
      // Every page: on a fast machine a buyer passes the 100 receipts of one page within the run.
      const held = new Set<string>()
      for (let page = 1, pages = 1; page <= pages; page++) {
        const reply = yield* send(`${url}/api/receipts?payer=${buyer}&limit=100&page=${page}`, { fresh: true })
        if (reply.status !== 200) {
          lost.push(`receipts of ${buyer}, page ${page}: ${reply.status}`)
          break
        }
        pages = reply.json.pages
        for (const r of reply.json.receipts as Array<{ receiptId: string; handoffId: string }>) {
          held.add(`${r.receiptId} ${r.handoffId}`)
        }
      }
      for (const unlock of acks.unlocks.filter((_) => _.buyer === buyer)) {
        if (!held.has(`${unlock.receiptId} ${unlock.handoff}`)) {
          lost.push(`receipt ${unlock.receiptId} of ${buyer} for ${unlock.handoff}`)
        }
      }
    }
    return lost
  })
