import type { RequestStep } from "autocannon"
import { cpuPerRequest, hammer, median, type WithCpu } from "./Measure.ts"
import { machineTicks, type Server } from "./Processes.ts"

/** One side of a round: the desk's CPU per request, and how much of the machine sat idle meanwhile. */
export type ScalingSide = WithCpu & {
  /** Share of every core's time idle while the side was measured; absent where /proc/stat could not be read. */
  readonly machineIdle?: number
}

export interface Scaling {
  readonly route: string
  readonly workers: number
  /** Each round measures both desks, the order swapped from one round to the next. */
  readonly rounds: ReadonlyArray<{ readonly one: ScalingSide; readonly many: ScalingSide }>
  /**
   * The median over the rounds of each round's throughput in `workers` processes over its throughput in one: the
   * two of a round run back to back, so each ratio compares them on the same host, whatever it did between rounds.
   */
  readonly speedup: number
}

/**
 * One desk process against `workers` of them (DESK_WORKERS) on one route, both running side by side on the same
 * database and Redis, measured in turn for `rounds` rounds with the order swapped each round: on a shared host
 * whichever runs first was seen to move the figures, and a single pair moved 1.24x-1.45x between runs.
 */
export const measureScaling = async (options: {
  readonly one: Server
  readonly many: Server
  readonly workers: number
  readonly route: string
  readonly requests: Array<RequestStep>
  readonly rounds: number
  readonly connections: number
  readonly warmup: number
  readonly seconds: number
}): Promise<Scaling> => {
  const measure = async (desk: Server): Promise<ScalingSide> => {
    await hammer(desk.url, options.requests, options.connections, options.warmup)
    const before = desk.cpuMs()
    const ticks = machineTicks()
    const measured = await hammer(desk.url, options.requests, options.connections, options.seconds)
    const after = machineTicks()
    const total = after.total - ticks.total
    return {
      ...measured,
      cpuMsPerRequest: cpuPerRequest(desk.cpuMs() - before, measured),
      ...(total > 0 ? { machineIdle: (after.idle - ticks.idle) / total } : {})
    }
  }
  const rounds: Array<{ one: ScalingSide; many: ScalingSide }> = []
  for (let round = 0; round < options.rounds; round++) {
    if (round % 2 === 0) {
      const one = await measure(options.one)
      rounds.push({ one, many: await measure(options.many) })
    } else {
      const many = await measure(options.many)
      rounds.push({ one: await measure(options.one), many })
    }
  }
  return {
    route: options.route,
    workers: options.workers,
    rounds,
    speedup: median(rounds.map((round) => round.many.rps / round.one.rps))
  }
}
