import { Cause, Option } from "effect"
import { StartupError } from "./Domain/StartupError.ts"

/** The first message down a chain of causes: a failed listen is a ServeError with no message of its own. */
const firstMessage = (failure: unknown): string => {
  let current = failure
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    if (current.message.trim() !== "") return current.message
    current = current.cause
  }
  return current instanceof Error || current === undefined ? "unknown failure" : String(current)
}

/** The one line a failed start prints: a StartupError's message when there is one, else the first message found. */
export const startupReason = (cause: Cause.Cause<unknown>): string => {
  const known = Cause.find(cause, (reason) => {
    const error = reason._tag === "Fail" ? reason.error : reason._tag === "Die" ? reason.defect : undefined
    return error instanceof StartupError ? Option.some(error.message) : Option.none()
  })
  return (Option.isSome(known) ? known.value : firstMessage(Cause.squash(cause))).split("\n")[0]!
}
