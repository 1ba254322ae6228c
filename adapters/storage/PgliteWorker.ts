import { PGlite, types } from "@electric-sql/pglite"
import type { ParserOptions, PGliteOptions, Results, RowMode } from "@electric-sql/pglite"
import { mkdir } from "node:fs/promises"
import { parentPort, workerData } from "node:worker_threads"

/**
 * PGlite on a thread of its own. Its statements run synchronously inside WebAssembly: on the desk's event loop
 * they blocked it, so under load new connections were read about one per statement and waited seconds for
 * their first answer. Here the loop stays free and the database gets the other core.
 *
 * Messages are handled one at a time, in order; the desk's side (Pglite.ts) owns the lock that gives a
 * transaction the session.
 */

export interface OpenOptions {
  readonly dataDir: string | undefined
}

export type Request =
  | {
    readonly id: number
    readonly op: "run"
    readonly sql: string
    readonly params: ReadonlyArray<unknown>
    readonly rowMode: RowMode
  }
  | { readonly id: number; readonly op: "close" }

export type Reply =
  | { readonly id: number; readonly ok: true; readonly results: ReadonlyArray<Results<unknown>> }
  | { readonly id: number; readonly ok: false; readonly error: Record<string, unknown> }

/**
 * PGlite decodes every text value with a `TextDecoder("utf-8")`, which drops a leading U+FEFF as a byte order mark:
 * a body that begins with one came back a character short, its hash no longer the one filed (PostgreSQL keeps it).
 * Text read from the database is data, never a stream with a mark to strip: on this thread every decoder keeps it.
 */
const Decoder = globalThis.TextDecoder
globalThis.TextDecoder = class extends Decoder {
  constructor(label?: string, options?: ConstructorParameters<typeof Decoder>[1]) {
    super(label, { ...options, ignoreBOM: true })
  }
}

const SHARED_BUFFERS = "16MB"

const localDate = /^(\d{4,})-(\d{2})-(\d{2})$/

// Parse like node-postgres so decoders behave the same on both backends. Still different: interval
// (string, not an object), numeric[] (strings, not floats), timestamps before year 100. bytea stays hex
// here and becomes a Buffer on the desk's side (a Buffer would arrive as a plain Uint8Array).
const parsers: ParserOptions = {
  [types.INT8]: (value) => value,
  [types.BYTEA]: (value) => value,
  [types.DATE]: (value) => {
    const ymd = localDate.exec(value)
    return ymd === null
      ? types.parsers[types.DATE]!(value)
      : new Date(Number(ymd[1]), Number(ymd[2]) - 1, Number(ymd[3]))
  }
}

/** What survives the trip back: the message and PostgreSQL's fields (code 23505 and the like). */
const errorFields = (error: unknown): Record<string, unknown> => {
  if (!(error instanceof Error)) return { message: String(error) }
  const fields: Record<string, unknown> = { message: error.message, name: error.name }
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === "function" || (typeof value === "object" && value !== null)) continue
    fields[key] = value
  }
  return fields
}

const open = async ({ dataDir }: OpenOptions) => {
  // NODEFS writes through (writeSync) before COMMIT returns: safe from kill -9, not from power loss
  // (PGlite runs fsync=off; Emscripten's fsync is a no-op). relaxedDurability would ack before syncToFs.
  // PostgreSQL's default 128 MB of shared buffers is touched at start: with 32 MB the process started about 120 MB
  // smaller (the operating system's page cache still holds the files); 16 MB took the WebAssembly memory at the
  // bench's peak from ~52 to ~33 MB, with no throughput lost there (docs/operating.md has the figures).
  const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${SHARED_BUFFERS}`]
  const options: PGliteOptions = { parsers, relaxedDurability: false, startParams }
  if (dataDir === undefined) return PGlite.create(options)
  await mkdir(dataDir, { recursive: true })
  return PGlite.create({ ...options, dataDir })
}

const port = parentPort!
const opened = open(workerData as OpenOptions)
// An open that fails is reported once, as the answer to the first message, and the thread ends.
opened.catch(() => {})

const handle = async (request: Request): Promise<Reply> => {
  const db = await opened
  try {
    if (request.op === "close") {
      await db.close()
      return { id: request.id, ok: true, results: [] }
    }
    // Without parameters node-postgres uses the simple protocol, which allows several statements.
    const results = request.params.length === 0
      ? await db.exec(request.sql, { rowMode: request.rowMode })
      : [await db.query(request.sql, [...request.params], { rowMode: request.rowMode })]
    return { id: request.id, ok: true, results }
  } catch (error) {
    return { id: request.id, ok: false, error: errorFields(error) }
  }
}

let queue: Promise<unknown> = opened.then(
  () => port.postMessage({ id: 0, ok: true, results: [] } satisfies Reply),
  (error) => port.postMessage({ id: 0, ok: false, error: errorFields(error) } satisfies Reply)
)
port.on("message", (request: Request) => {
  queue = queue.then(() => handle(request)).then((reply) => port.postMessage(reply))
})
