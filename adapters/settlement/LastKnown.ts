/**
 * A probe's answer as last known, for the status every agent polls: at most one probe runs at a time, its answer is
 * kept for `freshMs`, and a caller after that is answered the kept one at once while one probe refreshes it behind
 * (the first caller waits for the first probe). So `GET /api/status` asks the facilitator (or the RPC) at most once
 * every `freshMs` however often it is polled: the desk's answers cost it no outbound call, a hosted facilitator's
 * quota is not spent by whoever polls, and a hanging one holds no status request. A probe that fails or takes longer
 * than `timeoutMs` is an answer of false.
 */
export const lastKnown = (probe: () => Promise<boolean>, freshMs: number, timeoutMs: number) => {
  let known: { readonly value: boolean; readonly at: number } | undefined
  let running: Promise<boolean> | undefined
  const refresh = () => {
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs)
    })
    const answered = Promise.race([probe().catch(() => false), timedOut]).then((value) => {
      clearTimeout(timer)
      known = { value, at: Date.now() }
      running = undefined
      return value
    })
    running = answered
    return answered
  }
  return (): Promise<boolean> => {
    if (known === undefined) return running ?? refresh()
    if (running === undefined && Date.now() - known.at >= freshMs) void refresh()
    return Promise.resolve(known.value)
  }
}
