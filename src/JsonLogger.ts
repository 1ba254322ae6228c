import { Cause, FiberId, Layer, Logger } from "effect"

const MAX_PENDING_CHARS = 64 * 1024

type Plain = string | number | boolean | null

const isPlain = (value: unknown): value is Plain =>
  value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean"

/**
 * Logger.jsonLogger's line, built with plain JSON.stringify when every value in it is a string, number, boolean or
 * null (the access line and nearly every other), else by Logger.jsonLogger itself. Its cycle-checking replacer and
 * per-value conversions cost about a tenth of a no-database request's CPU, for values that need neither.
 */
export const jsonLine = Logger.make<unknown, string>((options) => {
  const { annotations, cause, date, fiberId, logLevel, message, spans } = options
  const messages = Array.isArray(message) ? message : [message]
  if (!Cause.isEmpty(cause) || !messages.every(isPlain)) return Logger.jsonLogger.log(options)
  const annotationsObj: Record<string, Plain> = {}
  for (const [key, value] of annotations) {
    if (!isPlain(value)) return Logger.jsonLogger.log(options)
    annotationsObj[key] = value
  }
  const now = date.getTime()
  const spansObj: Record<string, number> = {}
  for (const span of spans) spansObj[span.label] = now - span.startTime
  return JSON.stringify({
    message: messages.length === 1 ? messages[0] : messages,
    logLevel: logLevel.label,
    timestamp: date.toISOString(),
    annotations: annotationsObj,
    spans: spansObj,
    fiberId: FiberId.threadName(fiberId)
  })
})

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
  return { logger: Logger.map(jsonLine, push), flush }
}

/** Replaces the default logger for the whole process; stdout writes are synchronous on Linux, so exit loses nothing. */
export const layer = Layer.suspend(() => {
  const { flush, logger } = make((text) => process.stdout.write(text))
  process.once("exit", flush)
  return Logger.replace(Logger.defaultLogger, logger)
})
