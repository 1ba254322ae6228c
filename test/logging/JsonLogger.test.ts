import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, FiberId, FiberRefs, HashMap, List, Logger, LogLevel, LogSpan } from "effect"
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
})

describe("JsonLogger.jsonLine", () => {
  const entry = (
    message: unknown,
    annotations: Record<string, unknown>,
    cause: Cause.Cause<unknown> = Cause.empty
  ) => ({
    fiberId: FiberId.make(7, 0),
    logLevel: LogLevel.Info,
    message,
    cause,
    context: FiberRefs.empty(),
    spans: List.make(LogSpan.make("http", 1_000)),
    annotations: HashMap.fromIterable(Object.entries(annotations)),
    date: new Date(1_250)
  })

  it("is Logger.jsonLogger's line, with plain values and with values only that logger can render", () => {
    const entries = [
      entry(["Sent HTTP response"], { requestId: "r-1", "http.status": 200, "http.url": "/a?q=\"x\"\n", ok: true }),
      entry(["two", "parts"], { n: null, nan: Number.NaN }),
      entry("not an array", {}),
      entry(["an object annotation"], { error: { tag: "X", nested: [1, 2] } }),
      entry([{ an: "object message" }], { requestId: "r-2" }),
      entry(["with a cause"], {}, Cause.fail("boom")),
      entry([123n], {})
    ]
    for (const options of entries) {
      expect(JsonLogger.jsonLine.log(options)).toBe(Logger.jsonLogger.log(options))
    }
  })
})
