/** Runs of %-escapes (`%C3%A9`), each a run of bytes. */
const ESCAPE_RUNS = /(?:%[0-9a-f]{2})+/gi

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** The text a run of %-escapes spells, or undefined when its bytes are not UTF-8. */
const spelled = (run: string): string | undefined => {
  try {
    return utf8.decode(Buffer.from(run.replace(/%/g, ""), "hex"))
  } catch {
    return undefined
  }
}

/** `text` with its %-escapes decoded where they spell UTF-8; runs that do not stay as they are. */
export const decodeEscapes = (text: string): string => text.replace(ESCAPE_RUNS, (run) => spelled(run) ?? run)

/** The first run of %-escapes in `text` whose bytes are not UTF-8, if any. */
export const badEscapes = (text: string): string | undefined =>
  text.match(ESCAPE_RUNS)?.find((run) => spelled(run) === undefined)
