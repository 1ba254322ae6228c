import { Cause, Effect } from "effect"
import { InternalError } from "../Domain/Errors.ts"
import { requestIdIn } from "./RequestId.ts"

/**
 * An unexpected failure, logged with its cause under `what`, answered (REST and MCP alike) as the internal-error
 * envelope naming the request (the `requestId` its answer and its log lines carry), so a report can be matched to
 * the log line.
 */
export const internalFailure = (what: string, cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const requestId = requestIdIn(yield* Effect.context<never>()) ?? "unknown"
    yield* Effect.logError(what, Cause.pretty(cause))
    return new InternalError({ message: "Something failed on the desk; retry, or report the requestId.", requestId })
  })
