import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import * as JsonLogger from "../../src/JsonLogger.ts"

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

describe("JsonLogger", () => {
  it("writes Logger.json lines once per event-loop turn, annotations included", async () => {
    const writes: Array<string> = []
    const { logger } = JsonLogger.make((text) => writes.push(text))
    await Effect.runPromise(
      Effect.all([Effect.log("first"), Effect.logWarning("second")]).pipe(
        Effect.annotateLogs("requestId", "req-1"),
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
    )
    expect(writes).toEqual([])
    await nextTurn()
    expect(writes).toHaveLength(1)
    const lines = writes[0]!.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((_) => [_.message, _.logLevel, _.annotations.requestId])).toEqual([
      ["first", "INFO", "req-1"],
      ["second", "WARN", "req-1"]
    ])
  })

  it("flush writes what is pending at once, and nothing twice", async () => {
    const writes: Array<string> = []
    const { flush, logger } = JsonLogger.make((text) => writes.push(text))
    await Effect.runPromise(Effect.log("last words").pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    flush()
    expect(writes).toHaveLength(1)
    expect(JSON.parse(writes[0]!).message).toBe("last words")
    await nextTurn()
    expect(writes).toHaveLength(1)
  })

  it("takes access lines into the same buffer, in the order they come", async () => {
    const writes: Array<string> = []
    const { logger, push } = JsonLogger.make((text) => writes.push(text))
    push(JSON.stringify({ message: "Sent HTTP response" }))
    await Effect.runPromise(Effect.log("after").pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    await nextTurn()
    expect(writes).toHaveLength(1)
    expect(writes[0]!.trimEnd().split("\n").map((line) => JSON.parse(line).message)).toEqual([
      "Sent HTTP response",
      "after"
    ])
  })
})
