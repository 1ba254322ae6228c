/**
 * A response body written as these parts in turn, all at once, as one string would be (the desk's server writes
 * it: src/Http/NodeServer.ts). Not a stream: piped, it would wait for a slow client to drain each part before
 * ending the response, and a client that never reads would hold its turn (src/Http/Admission.ts) for as long.
 */
export class JsonParts {
  constructor(readonly parts: ReadonlyArray<string>) {}
}

/** A top-level list of more items than this is encoded item by item. */
export const ITEMS_APART = 32

/** Items are gathered into parts of about this many characters (see `jsonParts`). */
export const PART_CHARS = 32_768

const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  return (prototype === Object.prototype || prototype === null) && !("toJSON" in value)
}

const isLongList = (member: unknown) => Array.isArray(member) && member.length > ITEMS_APART

/** Whether one of `value`'s own members is a long list; asked of every response, so without copying its entries. */
const holdsLongList = (value: Record<string, unknown>) => {
  for (const key in value) {
    if (Object.hasOwn(value, key) && isLongList(value[key])) return true
  }
  return false
}

/**
 * `JSON.stringify(value)`'s text in parts, when `value` is a plain object holding a list of more than ITEMS_APART
 * items (a page of previews or receipts); otherwise undefined, and the text is best made whole. V8 builds a long
 * JSON text as a rope, and reading it (its UTF-8 length for the Content-Length, then its bytes for the socket)
 * first copies it whole into one string; past 128 kB that string goes to the large-object space, allocated and
 * swept on its own. For a page of 100 previews (176 kB) stringify and length took 1.13-1.15 ms against
 * 0.42-0.49 in parts (one process, 500 runs each, 2026-11-28), with 20 previews (35 kB) the same 0.09-0.10.
 * Each part is joined flat from the items' own texts, about PART_CHARS and one item long: under 64 kB for items
 * the size of previews (at most a few kB each), so Node's copy of it for the socket is no fresh mmap either
 * (`MALLOC_MMAP_THRESHOLD_` in the start script). The parts joined are exactly `JSON.stringify(value)`
 * (test/http/JsonParts.test.ts).
 */
export const jsonParts = (value: unknown): ReadonlyArray<string> | undefined => {
  if (!isPlainObject(value) || !holdsLongList(value)) return undefined
  const entries = Object.entries(value)
  const parts: Array<string> = []
  let pieces: Array<string> = []
  let chars = 0
  const add = (piece: string) => {
    pieces.push(piece)
    chars += piece.length
    if (chars < PART_CHARS) return
    parts.push(pieces.join(""))
    pieces = []
    chars = 0
  }
  add("{")
  let first = true
  for (const [key, member] of entries) {
    const apart = isLongList(member)
    // As JSON.stringify leaves out a member whose value has no JSON text (undefined, a function, a symbol).
    const text = apart ? "" : JSON.stringify(member)
    if (text === undefined) continue
    add(`${first ? "" : ","}${JSON.stringify(key)}:${apart ? "[" : text}`)
    first = false
    if (!apart) continue
    const items = member as ReadonlyArray<unknown>
    for (let i = 0; i < items.length; i++) {
      // As JSON.stringify writes an item with no JSON text: null.
      add(`${i === 0 ? "" : ","}${JSON.stringify(items[i]) ?? "null"}`)
    }
    add("]")
  }
  add("}")
  if (pieces.length > 0) parts.push(pieces.join(""))
  return parts
}
