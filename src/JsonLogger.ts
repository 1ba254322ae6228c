import { Cause, FiberId, HashMap, Layer, List, Logger } from "effect"

const MAX_PENDING_CHARS = 64 * 1024

const isPlain = (value: unknown) =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * Logger.jsonLogger's line, built without its circular-reference and redaction walk when there is nothing to
 * walk: a text message, plain annotation values, no cause. Anything else goes through Logger.jsonLogger itself.
 */
export const lineOf = (options: Logger.Logger.Options<unknown>): string => {
  const { annotations, cause, date, fiberId, logLevel, message, spans } = options
  const text = Array.isArray(message) && message.length === 1 ? message[0] : message
  if (typeof text !== "string" || !Cause.isEmpty(cause)) return Logger.jsonLogger.log(options)
  const annotationsObj: Record<string, unknown> = {}
  for (const [key, value] of HashMap.toEntries(annotations)) {
    if (!isPlain(value)) return Logger.jsonLogger.log(options)
    annotationsObj[key] = value
  }
  const now = date.getTime()
  const spansObj: Record<string, number> = {}
  for (const span of List.toArray(spans)) spansObj[span.label] = now - span.startTime
  return JSON.stringify({
    message: text,
    logLevel: logLevel.label,
    timestamp: date.toISOString(),
    annotations: annotationsObj,
    spans: spansObj,
    fiberId: FiberId.threadName(fiberId)
  })
}

/**
 * Logger.json's lines, written to stdout once per event-loop turn instead of one console.log per line: under
 * load the per-line write cost more than answering the request. Lines still leave within the same turn of
 * the event loop, and whatever is pending when the process exits is written before it goes.
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
  return { logger: Logger.make((options) => push(lineOf(options))), flush }
}

/** Replaces the default logger for the whole process; stdout writes are synchronous on Linux, so exit loses nothing. */
export const layer = Layer.suspend(() => {
  const { flush, logger } = make((text) => process.stdout.write(text))
  process.once("exit", flush)
  return Logger.replace(Logger.defaultLogger, logger)
})
