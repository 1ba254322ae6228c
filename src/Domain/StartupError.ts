import { Data } from "effect"

/**
 * Why the desk cannot start, in one line an operator can act on: the variable to fix and what is wrong with it.
 * Adapters raise it where they know the cause (a database that refuses, a data directory in use).
 */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}
