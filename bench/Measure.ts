import autocannon, { type RequestStep } from "autocannon"

/** One measured load: what every scenario and reference reports. */
export interface Measured {
  readonly requests: number
  readonly seconds: number
  readonly rps: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly errors: number
  /** Answers by HTTP status, plus socket errors and timeouts, when there were any failures. */
  readonly failures?: Record<string, number>
  /**
   * CPU time the load generator (this process) spent per answered request, in ms, for closed-loop loads. On a host
   * whose cores the server shares with it, this is what each request takes from the server besides its own work.
   */
  readonly loadCpuMsPerRequest?: number
}

/** A measurement with the CPU the measured side spent per request, in ms. */
export type WithCpu = Measured & { readonly cpuMsPerRequest: number }

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

export const summarize = (latencies: Array<number>, errors: number, seconds: number): Measured => {
  const sorted = latencies.sort((a, b) => a - b)
  return {
    requests: sorted.length,
    seconds,
    rps: sorted.length / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    errors
  }
}

export const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** CPU time a server spent per request answered while `measured` ran, in ms. */
export const cpuPerRequest = (cpuMs: number, measured: Measured) => cpuMs / Math.max(1, measured.rps * measured.seconds)

/**
 * Drives `url` with autocannon, each connection sending its next request as soon as one is answered (closed
 * loop); every non-2xx answer, socket error and timeout counts as an error.
 */
export const hammer = async (
  url: string,
  requests: Array<RequestStep>,
  connections: number,
  seconds: number
): Promise<Measured> => {
  const cpuBefore = process.cpuUsage()
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    timeout: 10,
    headers: { accept: "application/json" },
    requests
  })
  const cpu = process.cpuUsage(cpuBefore)
  const ok = result.requests.total - result.non2xx
  const failures: Record<string, number> = {}
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) {
    if (!status.startsWith("2")) failures[status] = count
  }
  if (result.errors > 0) failures.socketErrors = result.errors
  if (result.timeouts > 0) failures.timeouts = result.timeouts
  const measured: Measured = {
    requests: result.requests.total,
    seconds: result.duration,
    rps: ok / result.duration,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors: result.non2xx + result.errors + result.timeouts,
    ...(Object.keys(failures).length > 0 ? { failures } : {})
  }
  return { ...measured, loadCpuMsPerRequest: cpuPerRequest((cpu.user + cpu.system) / 1000, measured) }
}
