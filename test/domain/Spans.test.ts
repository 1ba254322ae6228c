import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { spanned } from "../../src/Spans.ts"

/** The name of the span a function made by `spanned` runs in, if any, read where the function is made. */
const spanOfCall = Effect.gen(function*() {
  const fn = yield* spanned
  const call = fn("Ledger.unlock")(function*(n: number) {
    const span = yield* Effect.option(Effect.currentSpan)
    return { n, span: Option.map(span, (_) => _.name) }
  })
  return yield* call(7)
})

describe("spanned", () => {
  it.effect("names a span per call where tracing is on", () =>
    Effect.gen(function*() {
      expect(yield* spanOfCall).toEqual({ n: 7, span: Option.some("Ledger.unlock") })
    }))

  it.effect("makes no span where tracing is off, as the desk runs", () =>
    Effect.gen(function*() {
      expect(yield* Effect.withTracerEnabled(spanOfCall, false)).toEqual({ n: 7, span: Option.none() })
    }))
})
