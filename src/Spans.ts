import { Effect, FiberRef } from "effect"

/**
 * `Effect.fn(name)` where spans go somewhere, `Effect.fnUntraced` where they do not: the desk runs with tracing
 * off (src/main.ts). Even then a named Effect.fn captures a call-site stack and provides a span to the context on
 * every call, about 9 us of CPU each (a no-database request costs about 100 us) for a span that is dropped.
 * Read where a service is built, so the choice follows the tracing the service runs under; the names stay in
 * the code for when a tracer is configured.
 */
export const spanned: Effect.Effect<(name: string) => typeof Effect.fnUntraced> = Effect.map(
  FiberRef.get(FiberRef.currentTracerEnabled),
  (tracing) => (name) => tracing ? (Effect.fn(name) as unknown as typeof Effect.fnUntraced) : Effect.fnUntraced
)
