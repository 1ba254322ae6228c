import { Effect, Layer, Logger } from "effect"
import { withRequestIds } from "./Desk/RequestId.ts"
import { AccessLines } from "./Http/AccessLog.ts"

const MAX_PENDING_CHARS = 64 * 1024

/**
 * Logger.json's lines, written to stdout once per event-loop turn instead of one console.log per line: under
 * load the per-line write cost more than answering the request. Lines still leave within the same turn of
 * the event loop, and whatever is pending when the process exits is written before it goes. A line logged while a
 * request is worked on names it (`requestId`).
 */
export const make = (write: (text: string) => void) => {
  let pending: Array<string> = []
  let chars = 0
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (pending.length === 0) return
    const text = pending.join("\n") + "\n"
    pending = []
    chars = 0
    write(text)
  }
  const push = (line: string) => {
    pending.push(line)
    chars += line.length
    if (chars >= MAX_PENDING_CHARS) return flush()
    if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
  }
  return { logger: withRequestIds(Logger.map(Logger.jsonLogger, push)), flush, push }
}

/**
 * Replaces the default logger for the whole process, and takes the access lines (src/Http/AccessLog.ts) into the
 * same stdout buffer; stdout writes are synchronous on Linux, so exit loses nothing.
 */
export const layer = Layer.unwrapEffect(Effect.sync(() => {
  const { flush, logger, push } = make((text) => process.stdout.write(text))
  process.once("exit", flush)
  return Layer.merge(Logger.replace(Logger.defaultLogger, logger), Layer.succeed(AccessLines, push))
}))
