import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FiberSet } from "effect"
import { boarding } from "../../src/Boarding.ts"

/** A boarding whose batches wait until the test lands them, recording the keys each one carried. */
const gated = Effect.gen(function*() {
  const sent: Array<ReadonlyArray<number>> = []
  const gates: Array<Deferred.Deferred<void, string>> = []
  const board = boarding({
    run: yield* FiberSet.makeRuntime<never>(),
    send: (keys: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        sent.push(keys)
        const gate = yield* Deferred.make<void, string>()
        gates.push(gate)
        yield* Deferred.await(gate)
        return keys.map((key) => key * 10)
      })
  })
  return { board, sent, gates }
})

describe("boarding", () => {
  it.scoped("a call alone departs at once; calls made while a batch is out share the next one", () =>
    Effect.gen(function*() {
      const { board, gates, sent } = yield* gated
      const first = yield* Effect.fork(board(1))
      yield* Effect.yieldNow()
      expect(sent).toEqual([[1]])
      const later = yield* Effect.forEach([2, 3, 2], (key) => Effect.fork(board(key)))
      yield* Effect.yieldNow()
      expect(sent).toEqual([[1]])

      yield* Deferred.succeed(gates[0]!, undefined)
      expect(yield* Fiber.join(first)).toEqual([10])
      yield* Effect.yieldNow()
      // One batch for the three calls, each key once.
      expect(sent).toEqual([[1], [2, 3]])
      yield* Deferred.succeed(gates[1]!, undefined)
      for (const fiber of later) expect(yield* Fiber.join(fiber)).toEqual([20, 30])
    }))

  it.scoped("a failed batch fails every call aboard, and the next batch still departs", () =>
    Effect.gen(function*() {
      const { board, gates, sent } = yield* gated
      const first = yield* Effect.fork(board(1))
      yield* Effect.yieldNow()
      const aboard = yield* Effect.forEach([2, 3], (key) => Effect.fork(board(key)))
      yield* Deferred.fail(gates[0]!, "database gone")
      expect(yield* Fiber.await(first)).toEqual(Exit.fail("database gone"))
      yield* Effect.yieldNow()
      yield* Deferred.fail(gates[1]!, "still gone")
      for (const fiber of aboard) expect(yield* Fiber.await(fiber)).toEqual(Exit.fail("still gone"))

      const after = yield* Effect.fork(board(4))
      yield* Effect.yieldNow()
      expect(sent).toEqual([[1], [2, 3], [4]])
      yield* Deferred.succeed(gates[2]!, undefined)
      expect(yield* Fiber.join(after)).toEqual([40])
    }))

  it.scoped("a caller that gives up leaves the others aboard their answer", () =>
    Effect.gen(function*() {
      const { board, gates, sent } = yield* gated
      const first = yield* Effect.fork(board(0))
      yield* Effect.yieldNow()
      const leaving = yield* Effect.fork(board(1))
      const staying = yield* Effect.fork(board(2))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(leaving)
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Fiber.join(first)
      yield* Effect.yieldNow()
      // The batch left with the key of the caller that gave up, and answers the one that stayed.
      expect(sent).toEqual([[0], [1, 2]])
      yield* Deferred.succeed(gates[1]!, undefined)
      expect(yield* Fiber.join(staying)).toEqual([10, 20])
    }))
})
