import { Cause, Effect, FiberRef, HashMap, Option } from "effect"
import { InternalError } from "../Domain/Errors.ts"

/**
 * An unexpected failure, logged with its cause under `what`, answered (REST and MCP alike) as the internal-error
 * envelope naming the request (the `requestId` the edge annotates its logs with), so a report can be matched to
 * the log line.
 */
export const internalFailure = (what: string, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const annotations = yield* FiberRef.get(FiberRef.currentLogAnnotations)
    const requestId = Option.getOrElse(Option.map(HashMap.get(annotations, "requestId"), String), () => "unknown")
    yield* Effect.logError(what, Cause.pretty(cause))
    return new InternalError({ message: "Something failed on the desk; retry, or report the requestId.", requestId })
  })
