interface Range {
  readonly type: string
  readonly q: number
}

const parseAccept = (header: string): ReadonlyArray<Range> =>
  header.split(",").flatMap((part) => {
    const [type, ...params] = part.trim().toLowerCase().split(";")
    if (type === undefined || type === "") return []
    const q = params.map((_) => _.trim()).find((_) => _.startsWith("q="))
    return [{ type: type.trim(), q: q === undefined ? 1 : Number(q.slice(2)) || 0 }]
  })

/** The quality the client gives a media type: its most specific matching range wins (RFC 9110 §12.5.1). */
const qualityOf = (
  ranges: ReadonlyArray<Range>,
  mediaType: string
): { readonly q: number; readonly exact: boolean } => {
  const [main] = mediaType.split("/")
  const exact = ranges.find((_) => _.type === mediaType)
  if (exact) return { q: exact.q, exact: true }
  const partial = ranges.find((_) => _.type === `${main}/*`) ?? ranges.find((_) => _.type === "*/*")
  return { q: partial?.q ?? 0, exact: false }
}

/**
 * JSON when the client ranks application/json above text/html, or names JSON but not HTML (an agent's
 * `application/json, text/plain, *\/*`); browsers name text/html first, and no Accept header means a person.
 */
export const prefersJson = (accept: string | undefined): boolean => {
  if (accept === undefined) return false
  const ranges = parseAccept(accept)
  const json = qualityOf(ranges, "application/json")
  const html = qualityOf(ranges, "text/html")
  if (json.q !== html.q) return json.q > html.q
  return json.q > 0 && json.exact && !html.exact
}
