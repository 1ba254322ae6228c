/** What the local-loop scripts share: one-line errors and the desk's address from PORT / DESK_URL. */

/** The first line of an error, with its code (ECONNREFUSED...) when the message does not say it. */
export const oneLine = (error: unknown): string => {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined
  const code = (cause as { code?: unknown } | undefined)?.code ?? (error as { code?: unknown } | undefined)?.code
  const message = (cause ?? error) instanceof Error ? (cause ?? (error as Error)).message : String(error)
  const first = message.split("\n")[0]!.trim()
  return typeof code === "string" && !first.includes(code) ? `${first} (${code})` : first
}

export const fail = (script: string, reason: string): never => {
  process.stderr.write(`${script}: ${reason}\n`)
  process.exit(1)
}

/** DESK_URL wins; else http://127.0.0.1:PORT, PORT defaulting to the desk's 8402. */
export const deskUrl = (script: string, flag?: string): { readonly url: string; readonly port: string } => {
  const given = flag ?? process.env["DESK_URL"]
  if (given !== undefined && given !== "") {
    const url = URL.canParse(given) ? new URL(given) : fail(script, `invalid desk URL "${given}" (DESK_URL or --desk)`)
    return { url: url.origin, port: url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port }
  }
  const port = process.env["PORT"] ?? "8402"
  if (!/^\d+$/.test(port) || Number(port) > 65_535) fail(script, `invalid PORT "${port}"`)
  return { url: `http://127.0.0.1:${port}`, port }
}
